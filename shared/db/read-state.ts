import { clock } from '../clock';
import { type StoredConversation, withUnreadDelta } from '../conversations/state';
import { conversations } from './conversations';
import { messages, type StoredMessage } from './messages';

/** Message updates per transaction: 99 plus the conversation's own counter update. */
const CHUNK = 99;

/**
 * Read state of a conversation's visitor messages. Each chunk of messages changes in one transaction
 * with the conversation's unread count (`mutate`, on `rev`), so the count stays exact.
 */
export const readState = {
  /**
   * Marks read every unread visitor message that exists now, one posted a moment ago included: the
   * strongly read `unreadCount` says how many to find (`messages.unreadToMark`).
   * How many changed from unread to read.
   */
  async markAllRead(
    orgId: string,
    conversationId: string,
    check: (conversation: StoredConversation) => void,
  ): Promise<number> {
    let updated = 0;
    // Bounded: 100 chunks of 99 is far beyond any real backlog of unread visitor messages.
    for (let round = 0; round < 100; round++) {
      const changed = await conversations.mutate(
        orgId,
        conversationId,
        async (current) => {
          const { messages: unread, more } = await messages.unreadToMark(
            orgId,
            conversationId,
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
        { check },
      );
      updated += changed.changed;
      if (!changed.more) break;
    }
    return updated;
  },

  /**
   * Marks unread the given visitor messages, read strongly by the caller (`found`, which the first
   * chunk's first attempt starts from; retries read afresh). How many changed from read to unread.
   */
  async markUnread(
    orgId: string,
    conversationId: string,
    ids: readonly string[],
    options: {
      check: (conversation: StoredConversation) => void;
      conversation: StoredConversation;
      found: ReadonlyMap<string, StoredMessage>;
    },
  ): Promise<number> {
    let updated = 0;
    for (let start = 0; start < ids.length; start += CHUNK) {
      const chunk = ids.slice(start, start + CHUNK);
      let known: StoredMessage[] | undefined =
        start === 0 ? chunk.flatMap((id) => options.found.get(id) ?? []) : undefined;
      updated += await conversations.mutate(
        orgId,
        conversationId,
        async (current) => {
          const fresh = known ?? [...(await messages.getMany(orgId, conversationId, chunk)).values()];
          known = undefined;
          const read = fresh.filter((message) => message.isRead && !message.deletedAt);
          if (read.length === 0) return { next: undefined, result: 0 };
          return {
            next: withUnreadDelta(current, read.length, clock.nowIso()),
            writes: read.map((message) => messages.readStateWrite(message, false)),
            result: read.length,
          };
        },
        { check: options.check, ...(start === 0 ? { initial: options.conversation } : {}) },
      );
    }
    return updated;
  },
};
