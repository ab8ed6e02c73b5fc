import { messages } from '../../shared/db/messages';
import { readState } from '../../shared/db/read-state';
import { NotFoundError, ValidationError } from '../../shared/errors';
import { ok, route } from '../../shared/http/route';
import { isUuid } from '../../shared/ids';
import { idParams } from '../../shared/schemas/common';
import { ids } from '../../shared/schemas/examples';
import { unreadBulkBody, updatedCount } from '../../shared/schemas/message';
import { accessRules, loadConversation } from './access';

export const markRead = route({
  method: 'POST',
  path: '/api/conversations/{id}/read',
  operationId: 'markConversationRead',
  summary: 'Mark the visitor messages read',
  description:
    '`updatedCount` counts the messages that changed from unread to read (0 when there were none). Each chunk of messages changes together with the conversation’s unread count, so the count stays exact.',
  tag: 'Messages',
  scope: 'conversations:write',
  callers: ['apiKey', 'operator'],
  params: idParams,
  response: { status: 200, schema: updatedCount, description: 'How many messages changed' },
  errors: [404],
  examples: { response: { updatedCount: 1 } },
  handle: async ({ caller, organization, params }) =>
    ok({
      updatedCount: await readState.markAllRead(caller.orgId, params.id, accessRules(caller, organization)),
    }),
});

export const markUnread = route({
  method: 'PATCH',
  path: '/api/conversations/{id}/messages/unread-bulk',
  operationId: 'markMessagesUnread',
  summary: 'Mark visitor messages unread',
  description:
    'Up to 500 visitor messages of this conversation. Ids that are not messages of this conversation are 404 with `details.ids`; a message that is not a visitor message (or is deleted) is 422 naming it in `details.field`. `updatedCount` counts the messages that changed from read to unread. Operators and API keys only.',
  tag: 'Messages',
  scope: 'conversations:write',
  callers: ['apiKey', 'operator'],
  params: idParams,
  body: unreadBulkBody,
  response: { status: 200, schema: updatedCount, description: 'How many messages changed' },
  errors: [404],
  examples: { request: { messageIds: [ids.reply] }, response: { updatedCount: 1 } },
  handle: async ({ caller, organization, params, body }) => {
    const ids = [...new Set(body.messageIds)];
    const [conversation, found] = await Promise.all([
      loadConversation(caller, organization, params.id),
      messages.getMany(caller.orgId, params.id, ids.filter(isUuid)),
    ]);
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length)
      throw new NotFoundError('Some messages do not exist in this conversation', { ids: missing });
    const invalid = body.messageIds.findIndex((id) => {
      const message = found.get(id);
      return message?.senderType !== 'visitor' || Boolean(message.deletedAt);
    });
    if (invalid >= 0) {
      throw ValidationError.field(
        `messageIds.${invalid}`,
        'Only visitor messages that are not deleted can be marked unread',
      );
    }
    const updated = await readState.markUnread(caller.orgId, params.id, ids, {
      check: accessRules(caller, organization),
      conversation,
      found,
    });
    return ok({ updatedCount: updated });
  },
});
