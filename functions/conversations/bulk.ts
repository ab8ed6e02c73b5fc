import { clock } from '../../shared/clock';
import { actorOf } from '../../shared/conversations/actor';
import { withChange } from '../../shared/conversations/state';
import { conversations } from '../../shared/db/conversations';
import { auditActorOf } from '../../shared/db/org-audit';
import { ok, route } from '../../shared/http/route';
import { bulkConversationsBody } from '../../shared/schemas/conversation';
import { ids } from '../../shared/schemas/examples';
import * as z from '../../shared/schemas/zod';

export const bulkClose = route({
  method: 'POST',
  path: '/api/conversations/bulk-close',
  operationId: 'bulkCloseConversations',
  summary: 'Close conversations in bulk',
  description:
    '1 to 100 ids. If any id is not a conversation of the organization, nothing changes: 404 with `details.ids`. Conversations already closed stay as they are; `closed` counts the distinct conversations that are closed after the call, so a repeat answers the same.',
  tag: 'Conversations',
  scope: 'conversations:write',
  adminOnly: true,
  callers: ['apiKey', 'operator'],
  body: bulkConversationsBody,
  response: {
    status: 200,
    schema: z.object({ success: z.boolean(), closed: z.int() }),
    description: 'Closed',
  },
  errors: [404],
  examples: {
    request: { conversationIds: [ids.conversation] },
    response: { success: true, closed: 1 },
  },
  handle: async ({ caller, body }) => {
    const closed = await conversations.bulkApply(
      caller.orgId,
      body.conversationIds,
      (current) =>
        current.status === 'closed'
          ? undefined
          : withChange(current, { status: 'closed', snoozedUntil: null }, clock.nowIso()),
      { actor: actorOf(caller), audit: { type: 'conversation.bulk_closed', by: auditActorOf(caller) } },
    );
    return ok({ success: true, closed });
  },
});

export const bulkDelete = route({
  method: 'POST',
  path: '/api/conversations/bulk-delete',
  operationId: 'bulkDeleteConversations',
  summary: 'Delete conversations in bulk',
  description:
    '1 to 100 ids. If any id is not a conversation of the organization, nothing changes: 404 with `details.ids`. Each conversation is soft-deleted at once (404 everywhere from then on, gone from listings); its messages are then marked deleted in the background, in resumable steps, however many there are. A repeat after success is 404, as the conversations no longer exist.',
  tag: 'Conversations',
  scope: 'conversations:write',
  adminOnly: true,
  callers: ['apiKey', 'operator'],
  body: bulkConversationsBody,
  response: {
    status: 200,
    schema: z.object({ success: z.boolean(), deleted: z.int() }),
    description: 'Deleted',
  },
  errors: [404],
  examples: {
    request: { conversationIds: [ids.conversation] },
    response: { success: true, deleted: 1 },
  },
  handle: async ({ caller, body }) => {
    const deleted = await conversations.bulkApply(
      caller.orgId,
      body.conversationIds,
      (current) => {
        const now = clock.nowIso();
        return withChange(current, { deletedAt: now }, now);
      },
      { actor: actorOf(caller), audit: { type: 'conversation.bulk_deleted', by: auditActorOf(caller) } },
    );
    return ok({ success: true, deleted });
  },
});
