import type { StoredConversation } from '../conversations/state';
import type { Conversation } from '../schemas/conversation';
import { bulkApply } from './conversation-bulk';
import { createConversation } from './conversation-create';
import { mutate, update } from './conversation-mutate';
import { getConversation } from './conversation-reads';

/**
 * The conversation's data layer, by concern:
 * - conversation-item.ts: the stored item, its state write on `rev`, the liveness condition;
 * - conversation-reads.ts: strongly consistent reads of live conversations;
 * - conversation-create.ts: a new conversation with its first message;
 * - conversation-implications.ts: what a change implies (events, audit entries, team load);
 * - conversation-mutate.ts: read, change, write on `rev` with retries, one conversation at a time;
 * - conversation-bulk.ts: one change for many conversations, in chunks of one transaction each;
 * - conversation-append.ts: the append protocol of a message post (and conversation-first-response.ts);
 * - conversation-rewrite.ts: a worker's rewrite of one conversation, without a request.
 */

export type { BulkOptions } from './conversation-bulk';
export { type ConversationAuthor, newConversation } from './conversation-create';
export type { ChangeFacts } from './conversation-implications';
export { conversationItem, storedConversationOf, toConversation } from './conversation-item';
export type { ConversationChange, MutateOptions, UpdateOptions } from './conversation-mutate';
export { conversationsById, conversationWithMessage } from './conversation-reads';
export { rewriteConversation } from './conversation-rewrite';
export type { Conversation, StoredConversation };

export const conversations = {
  create: createConversation,
  get: getConversation,
  /** A caller's change of one conversation, written with what it implies. */
  update,
  /** One change for many conversations, each implying what the same change of one implies. */
  bulkApply,
  /** The data layer's own read-change-write (read flags, surveys, edits): see conversation-mutate.ts. */
  mutate,
};
