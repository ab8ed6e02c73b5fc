import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import { type StoredConversation, withMessage } from '../conversations/state';
import { NotFoundError, PreconditionFailedError } from '../errors';
import { uuidv7 } from '../ids';
import type { Conversation, CreateConversationInput } from '../schemas/conversation';
import type { Message } from '../schemas/message';
import { conversationProjection } from '../schemas/projections';
import type { Visitor } from '../schemas/visitor';
import { assignmentEntry, auditWrite } from './audit';
import { db, tableName } from './client';
import { eventItem } from './events';
import { incrementWrites } from './increments';
import { keys } from './keys';
import { newMessage, putMessage } from './messages';
import { pickShape, projectAs } from './project';
import { stats } from './stats';
import { teamLoadWrites } from './team-load';
import { ConcurrentChangeError, RetryBudget, transact, type Write } from './transaction';

export type { Conversation, StoredConversation };

/** Who starts a conversation, and as whom its first message is written. */
export type ConversationAuthor =
  | { kind: 'visitor'; visitorId: string }
  | { kind: 'operator'; operatorId: string }
  | { kind: 'apiKey' };

export const toConversation: (item: object) => Conversation = projectAs<Conversation>(conversationProjection);

/** Every field of the stored state: the resource's, then the service's own (one pass, no spread). */
const storedShape = {
  ...conversationProjection,
  rev: true,
  firstVisitorMessageAt: true,
  deletedAt: true,
  locale: true,
  activeSurvey: true,
};

export function storedConversationOf(item: Record<string, unknown>): StoredConversation {
  const stored = pickShape<StoredConversation>(storedShape, item);
  stored.rev ??= 1;
  stored.firstVisitorMessageAt ??= null;
  stored.deletedAt ??= null;
  stored.locale ??= null;
  stored.activeSurvey ??= null;
  return stored;
}

/** The stored item: every listing key follows from the state, and a deleted conversation has none. */
export function conversationItem(conversation: StoredConversation) {
  const orgId = conversation.organizationId;
  return {
    ...keys.conversation(orgId, conversation.id),
    ...(conversation.deletedAt ? {} : keys.conversationIndexes({ orgId, ...conversation })),
    entity: 'conversation',
    ...conversation,
  };
}

/**
 * A transaction action that holds only while the conversation exists and is not soft-deleted: writes
 * to its children (notes, edits) cannot commit beside a concurrent deletion.
 */
export function conversationLive(orgId: string, conversationId: string): Write {
  return {
    action: {
      ConditionCheck: {
        TableName: tableName,
        Key: keys.conversation(orgId, conversationId),
        ConditionExpression:
          'attribute_exists(pk) AND (attribute_not_exists(deletedAt) OR deletedAt = :null)',
        ExpressionAttributeValues: { ':null': null },
      },
    },
    onConditionFailed: () => new NotFoundError('Conversation not found'),
  };
}

export interface ConversationChange<T> {
  /** The state after the change, or undefined when nothing changes (no write at all). */
  next: StoredConversation | undefined;
  /** Further actions of the same transaction: events, messages, audit entries. */
  writes?: Write[];
  result: T;
}

export interface MutateOptions {
  /** The client's `If-Match`: a different current version is 412. */
  ifMatch?: number | undefined;
  /** Access rules, checked against every state read (404/403). */
  check?: (conversation: StoredConversation) => void;
  /** A state the caller has just read strongly: the first attempt starts from it instead of reading again. */
  initial?: StoredConversation;
  /** The request's retry time, when the caller retries around this call too. */
  budget?: RetryBudget;
}

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

export const conversations = {
  /**
   * One transaction: the conversation, its first message if any, and their domain events. A
   * visitor's opening message (or an API key's, written on the visitor's behalf) starts the unread
   * count and the first-response clock; an operator's does not.
   */
  async create(orgId: string, author: ConversationAuthor, visitor: Visitor, input: CreateConversationInput) {
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
    const opened = conversation;
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
      { action: { Put: { TableName: tableName, Item: eventItem(orgId, 'conversation.created', api) } } },
    ];
    if (first) writes.push(...putMessage(first));
    writes.push(...incrementWrites(stats.conversationStarted(conversation, opened, first)));
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
  },

  /**
   * One strongly consistent GetItem (a client reads its own writes); soft-deleted conversations are
   * missing.
   */
  async get(orgId: string, conversationId: string): Promise<StoredConversation | undefined> {
    const { Item } = await db.send(
      new GetCommand({
        TableName: tableName,
        Key: keys.conversation(orgId, conversationId),
        ConsistentRead: true,
      }),
    );
    if (!Item || Item.deletedAt) return undefined;
    return storedConversationOf(Item);
  },

  /**
   * Read, change, write with a condition on `rev`, retrying when another writer got there first,
   * for at most the request's retry budget (then 503: the contract's 2 s bound). Every writer of
   * the conversation item goes through here, so counters and versions never lose an update. With
   * `ifMatch`, a version that moved on is 412 rather than a retry.
   */
  async mutate<T>(
    orgId: string,
    conversationId: string,
    change: (current: StoredConversation) => ConversationChange<T> | Promise<ConversationChange<T>>,
    options: MutateOptions = {},
  ): Promise<T> {
    const budget = options.budget ?? new RetryBudget();
    for (let attempt = 1; ; attempt++) {
      let current = attempt === 1 ? options.initial : undefined;
      if (!current) {
        const { Item } = await db.send(
          new GetCommand({
            TableName: tableName,
            Key: keys.conversation(orgId, conversationId),
            ConsistentRead: true,
          }),
        );
        if (!Item || Item.deletedAt) throw new NotFoundError('Conversation not found');
        current = storedConversationOf(Item);
      }
      options.check?.(current);
      if (options.ifMatch !== undefined && options.ifMatch !== current.version) {
        throw new PreconditionFailedError(current.version);
      }
      const { next, writes = [], result } = await change(current);
      if (!next && writes.length === 0) return result;
      const conversationWrite: Write[] = next
        ? [
            {
              action: {
                Put: {
                  TableName: tableName,
                  Item: conversationItem({ ...next, rev: current.rev + 1 }),
                  ConditionExpression: 'rev = :rev',
                  ExpressionAttributeValues: { ':rev': current.rev },
                },
              },
            },
          ]
        : [];
      // Every writer passes here, so each team's count of open conversations follows every change.
      const teamWrites = next ? teamLoadWrites(orgId, [{ before: current, after: next }]) : [];
      try {
        await transact([...conversationWrite, ...writes, ...teamWrites]);
        return result;
      } catch (error) {
        if (!(error instanceof ConcurrentChangeError) || !(await budget.pause(attempt))) throw error;
      }
    }
  },
};
