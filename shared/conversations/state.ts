import type { Conversation, MessagePreview } from '../schemas/conversation';
import type { Message } from '../schemas/message';

const PREVIEW_CHARS = 200;

export interface LocaleSetting {
  locale: string;
  source: 'operator_override' | 'visitor_override' | 'detected';
  locked: boolean;
  updatedAt: string;
}

/**
 * The conversation as stored: the API resource plus what only the service needs. `rev` changes on
 * every write (the optimistic-concurrency token of all writers); `version` only on changes an
 * integrator makes or sees as such, so a visitor typing never fails an operator's `If-Match`.
 */
export interface StoredConversation extends Conversation {
  rev: number;
  /** Starts the first-response clock. */
  firstVisitorMessageAt: string | null;
  deletedAt: string | null;
  locale: LocaleSetting | null;
  /** The survey response that counts in CSAT (its visitor's, at most one); null when none. */
  activeSurvey: ActiveSurvey | null;
}

/**
 * What a counted survey response added to the daily aggregates, kept on the conversation so a
 * deletion of either (written on `rev`, like every conversation change) subtracts exactly that.
 */
export interface ActiveSurvey {
  surveyId: string;
  score: number;
  /** The UTC day it counts on. */
  day: string;
  /** The conversation's operator when it was given, credited in `byOperator`. */
  operatorId: string | null;
}

export function preview(message: Message): MessagePreview {
  return {
    id: message.id,
    senderType: message.senderType,
    senderId: message.senderId,
    type: message.type,
    content: message.content.slice(0, PREVIEW_CHARS),
    createdAt: message.createdAt,
  };
}

/**
 * The computed fields after one more message, kept exact without scans: counts, the unread count
 * (visitor messages not yet read), the last message, and the first response time (the first
 * operator message after the first visitor message).
 */
export function withMessage(conversation: StoredConversation, message: Message): StoredConversation {
  const fromVisitor = message.senderType === 'visitor';
  const unreadCount = conversation.unreadCount + (fromVisitor && !message.isRead ? 1 : 0);
  const firstVisitorMessageAt =
    conversation.firstVisitorMessageAt ?? (fromVisitor ? message.createdAt : null);
  const answersVisitor =
    message.senderType === 'operator' &&
    conversation.firstResponseTimeMs === null &&
    conversation.firstVisitorMessageAt !== null;
  return {
    ...conversation,
    messageCount: conversation.messageCount + 1,
    unreadCount,
    hasUnreadMessages: unreadCount > 0,
    lastMessage: preview(message),
    lastMessageAt: message.createdAt,
    updatedAt: message.createdAt,
    firstVisitorMessageAt,
    firstResponseTimeMs: answersVisitor
      ? // Never negative: concurrent posts commit in an order their times need not follow.
        Math.max(
          0,
          Date.parse(message.createdAt) - Date.parse(conversation.firstVisitorMessageAt ?? message.createdAt),
        )
      : conversation.firstResponseTimeMs,
  };
}

/** A change an integrator makes or sees: the new fields, one more `version`, a new `updatedAt`. */
export function withChange(
  conversation: StoredConversation,
  changes: Partial<StoredConversation>,
  now: string,
): StoredConversation {
  return { ...conversation, ...changes, version: conversation.version + 1, updatedAt: now };
}

/** After `delta` visitor messages changed read state (negative: read, positive: unread). */
export function withUnreadDelta(
  conversation: StoredConversation,
  delta: number,
  now: string,
): StoredConversation {
  const unreadCount = Math.max(0, conversation.unreadCount + delta);
  return { ...conversation, unreadCount, hasUnreadMessages: unreadCount > 0, updatedAt: now };
}

/** After an edit of `message`: the preview follows when it is the last message. */
export function withEditedMessage(conversation: StoredConversation, message: Message): StoredConversation {
  if (conversation.lastMessage?.id !== message.id) return conversation;
  return { ...conversation, lastMessage: preview(message) };
}
