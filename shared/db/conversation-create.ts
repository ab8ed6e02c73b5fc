import { clock } from '../clock';
import { type StoredConversation, withMessage } from '../conversations/state';
import { uuidv7 } from '../ids';
import type { Conversation, CreateConversationInput } from '../schemas/conversation';
import type { Message } from '../schemas/message';
import type { Visitor } from '../schemas/visitor';
import { assignmentEntry, auditWrite } from './audit';
import { tableName } from './client';
import { conversationItem, toConversation } from './conversation-item';
import { eventWrite } from './events';
import { newMessage, putMessage } from './messages';
import { transact, type Write } from './transaction';

/** Who starts a conversation, and as whom its first message is written. */
export type ConversationAuthor =
  | { kind: 'visitor'; visitorId: string }
  | { kind: 'operator'; operatorId: string }
  | { kind: 'apiKey' };

/** What a new conversation is given; everything else starts at the values below. */
type NewConversationFields = Pick<
  StoredConversation,
  | 'id'
  | 'organizationId'
  | 'visitor'
  | 'operatorId'
  | 'status'
  | 'priority'
  | 'source'
  | 'snoozedUntil'
  | 'createdAt'
  | 'title'
  | 'tags'
  | 'customFields'
  | 'language'
  | 'metadata'
>;

/**
 * A conversation before its first message: no messages, nothing unread, no summary, version and
 * revision 1. The one place these starting values live (the export bench seeds with it too).
 */
export function newConversation(fields: NewConversationFields): StoredConversation {
  return {
    ...fields,
    visitorId: fields.visitor.id,
    teamId: null,
    aiEnabled: false,
    lastMessageAt: fields.createdAt,
    messageCount: 0,
    unreadCount: 0,
    hasUnreadMessages: false,
    aiSummary: null,
    aiSummaryGeneratedAt: null,
    aiClassification: null,
    version: 1,
    updatedAt: fields.createdAt,
    lastMessage: null,
    firstResponseTimeMs: null,
    rev: 1,
    firstVisitorMessageAt: null,
    deletedAt: null,
    locale: null,
    activeSurvey: null,
  };
}

/**
 * One transaction: the conversation, its first message if any, and their domain events. A
 * visitor's opening message (or an API key's, written on the visitor's behalf) starts the unread
 * count and the first-response clock; an operator's does not.
 */
export async function createConversation(
  orgId: string,
  author: ConversationAuthor,
  visitor: Visitor,
  input: CreateConversationInput,
): Promise<Conversation> {
  const now = clock.nowIso();
  const id = uuidv7();
  let conversation = newConversation({
    id,
    organizationId: orgId,
    visitor,
    operatorId: author.kind === 'operator' ? author.operatorId : null,
    status: 'open',
    priority: input.priority ?? 'normal',
    source: author.kind === 'visitor' ? 'widget' : 'api',
    snoozedUntil: null,
    createdAt: now,
    title: input.title ?? 'New conversation',
    tags: [...new Set(input.tags ?? [])],
    customFields: input.customFields ?? {},
    language: input.language ?? null,
    metadata: input.metadata ?? {},
  });
  let first: Message | undefined;
  if (input.message !== undefined) {
    first = newMessage({
      orgId,
      conversationId: id,
      senderType: author.kind === 'operator' ? 'operator' : 'visitor',
      senderId: author.kind === 'operator' ? author.operatorId : visitor.id,
      content: input.message,
      now,
    });
    conversation = withMessage(conversation, first);
    if (input.title === undefined) conversation.title = first.content.slice(0, 80);
  }
  const api = toConversation(conversation);
  const writes: Write[] = [
    {
      action: {
        Put: {
          TableName: tableName,
          Item: conversationItem(conversation),
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    },
    eventWrite(orgId, 'conversation.created', api),
  ];
  if (first) writes.push(...putMessage(first));
  if (author.kind === 'operator') {
    // An operator who starts a conversation is assigned to it: the history says so from the start.
    const actor = { type: 'operator' as const, id: author.operatorId };
    writes.push(
      auditWrite(orgId, id, 'ASSIGNMENT', {
        ...assignmentEntry(null, author.operatorId, null, actor),
        actor,
      }),
    );
  }
  await transact(writes);
  return api;
}
