import { clock } from '../../shared/clock';
import { withUnreadDelta } from '../../shared/conversations/state';
import { conversations } from '../../shared/db/conversations';
import { messages, type StoredMessage } from '../../shared/db/messages';
import { NotFoundError, ValidationError } from '../../shared/errors';
import { ok, route } from '../../shared/http/route';
import { isUuid } from '../../shared/ids';
import { idParams } from '../../shared/schemas/common';
import { ids } from '../../shared/schemas/examples';
import { unreadBulkBody, updatedCount } from '../../shared/schemas/message';
import { accessRules, loadConversation } from './access';

/** Message updates per transaction: 99 plus the conversation's own counter update. */
const CHUNK = 99;

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
  handle: async ({ caller, organization, params }) => {
    let updated = 0;
    // Bounded: 100 chunks of 99 is far beyond any real backlog of unread visitor messages.
    for (let round = 0; round < 100; round++) {
      const changed = await conversations.mutate(
        caller.orgId,
        params.id,
        async (current) => {
          // Every unread message that exists now, even one the lagging unread index does not show
          // yet: the strongly read `unreadCount` says how many to find (see `unreadToMark`).
          const { messages: unread, more } = await messages.unreadToMark(
            caller.orgId,
            params.id,
            current.unreadCount,
            CHUNK,
          );
          if (unread.length === 0) return { next: undefined, result: { changed: 0, more } };
          return {
            next: withUnreadDelta(current, -unread.length, clock.nowIso()),
            writes: unread.map((message) => messages.readStateWrite(message, true)),
            result: { changed: unread.length, more },
          };
        },
        { check: accessRules(caller, organization) },
      );
      updated += changed.changed;
      if (!changed.more) break;
    }
    return ok({ updatedCount: updated });
  },
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
    let updated = 0;
    for (let start = 0; start < ids.length; start += CHUNK) {
      const chunk = ids.slice(start, start + CHUNK);
      // The first chunk's first attempt starts from the strong reads above; retries read afresh.
      let known: StoredMessage[] | undefined =
        start === 0 ? chunk.flatMap((id) => found.get(id) ?? []) : undefined;
      updated += await conversations.mutate(
        caller.orgId,
        params.id,
        async (current) => {
          const fresh = known ?? [...(await messages.getMany(caller.orgId, params.id, chunk)).values()];
          known = undefined;
          const read = fresh.filter((message) => message.isRead && !message.deletedAt);
          if (read.length === 0) return { next: undefined, result: 0 };
          return {
            next: withUnreadDelta(current, read.length, clock.nowIso()),
            writes: read.map((message) => messages.readStateWrite(message, false)),
            result: read.length,
          };
        },
        { check: accessRules(caller, organization), ...(start === 0 ? { initial: conversation } : {}) },
      );
    }
    return ok({ updatedCount: updated });
  },
});
