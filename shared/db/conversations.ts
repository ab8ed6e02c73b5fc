import { GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import { uuidv7 } from '../ids';
import { sanitizeText, searchVectorOf } from '../sanitize/text';
import {
  type Conversation,
  type CreateConversationInput,
  conversation as conversationSchema,
  type ListConversationsQuery,
  type MessagePreview,
} from '../schemas/conversation';
import type { Message } from '../schemas/message';
import type { Visitor } from '../schemas/visitor';
import { db, tableName } from './client';
import { decodeCursor, encodeCursor } from './cursor';
import { eventItem } from './events';
import { keys } from './keys';
import { pickShape } from './project';

export type { Conversation };

/** Who starts a conversation, and as whom its first message is written. */
export type ConversationAuthor =
  | { kind: 'visitor'; visitorId: string }
  | { kind: 'operator'; operatorId: string }
  | { kind: 'apiKey' };

const PREVIEW_CHARS = 200;
const MAX_QUERY_PAGES = 10;

function preview(message: Message): MessagePreview {
  return {
    id: message.id,
    senderType: message.senderType,
    senderId: message.senderId,
    type: message.type,
    content: message.content.slice(0, PREVIEW_CHARS),
    createdAt: message.createdAt,
  };
}

const toConversation = (item: Record<string, unknown>): Conversation =>
  pickShape(conversationSchema.shape, item);

/** The filters that decide which listing (index) a query reads; the rest filter on the way. */
function chooseListing(orgId: string, query: ListConversationsQuery) {
  const partitions = keys.conversationListPartition;
  if (query.visitorId) return partitions.visitor(orgId, query.visitorId);
  if (query.operatorId) return partitions.operator(orgId, query.operatorId);
  if (query.status) return partitions.status(orgId, query.status);
  return partitions.all(orgId);
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
    let first: Message | undefined;
    if (input.message !== undefined) {
      const content = sanitizeText(input.message);
      first = {
        id: uuidv7(),
        orgId,
        conversationId: id,
        senderType: author.kind === 'operator' ? 'operator' : 'visitor',
        senderId: author.kind === 'operator' ? author.operatorId : visitor.id,
        content,
        type: 'text',
        metadata: {},
        isRead: false,
        isEdited: false,
        editedAt: null,
        createdAt: now,
        deletedAt: null,
        replyToId: null,
        mentions: null,
        searchVector: searchVectorOf(content),
      };
    }
    const fromVisitor = first?.senderType === 'visitor';
    const conversation: Conversation = {
      id,
      organizationId: orgId,
      visitorId: visitor.id,
      operatorId: author.kind === 'operator' ? author.operatorId : null,
      teamId: null,
      status: 'open',
      priority: input.priority ?? 'normal',
      source: author.kind === 'visitor' ? 'widget' : 'api',
      aiEnabled: false,
      snoozedUntil: null,
      lastMessageAt: now,
      title: input.title ?? (first ? first.content.slice(0, 80) : 'New conversation'),
      messageCount: first ? 1 : 0,
      unreadCount: fromVisitor ? 1 : 0,
      hasUnreadMessages: fromVisitor,
      tags: [...new Set(input.tags ?? [])],
      customFields: input.customFields ?? {},
      language: input.language ?? null,
      aiSummary: null,
      aiSummaryGeneratedAt: null,
      aiClassification: null,
      metadata: input.metadata ?? {},
      version: 1,
      createdAt: now,
      updatedAt: now,
      visitor,
      lastMessage: first ? preview(first) : null,
      firstResponseTimeMs: null,
    };
    const item = {
      ...keys.conversation(orgId, id),
      ...keys.conversationIndexes({ orgId, ...conversation }),
      entity: 'conversation',
      ...conversation,
      // Internal: starts the first-response clock; never part of a response.
      firstVisitorMessageAt: fromVisitor ? now : null,
    };
    const writes: NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']> = [
      { Put: { TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' } },
      { Put: { TableName: tableName, Item: eventItem(orgId, 'conversation.created', conversation) } },
    ];
    if (first) {
      writes.push(
        {
          Put: {
            TableName: tableName,
            Item: { ...keys.message(orgId, id, first.id), entity: 'message', ...first },
          },
        },
        { Put: { TableName: tableName, Item: eventItem(orgId, 'message.created', first) } },
      );
    }
    await db.send(new TransactWriteCommand({ TransactItems: writes }));
    return conversation;
  },

  /** One GetItem; soft-deleted conversations are missing. */
  async get(orgId: string, conversationId: string): Promise<Conversation | undefined> {
    const { Item } = await db.send(
      new GetCommand({ TableName: tableName, Key: keys.conversation(orgId, conversationId) }),
    );
    if (!Item || Item.deletedAt) return undefined;
    return toConversation(Item);
  },

  /**
   * Newest `lastMessageAt` first from the most selective listing; remaining filters apply on the
   * way. Reads continue (bounded) until the page is full, so filtered pages are not spuriously short.
   * `since` hides conversations outside the organization's history window in the key condition.
   */
  async list(orgId: string, query: ListConversationsQuery, since: string | undefined) {
    const listing = chooseListing(orgId, query);
    const queryId = JSON.stringify([
      'conversations',
      query.status,
      query.operatorId,
      query.visitorId,
      query.priority,
      query.tag,
    ]);
    let startKey = query.cursor ? decodeCursor(query.cursor, orgId, queryId) : undefined;
    const pkName = `${listing.index}pk`;
    const skName = `${listing.index}sk`;

    const filters: string[] = [];
    const names: Record<string, string> = { '#pk': pkName };
    const values: Record<string, unknown> = { ':pk': listing.pk };
    const addFilter = (field: keyof ListConversationsQuery, expression: string) => {
      const value = query[field];
      if (value === undefined || listing.index === indexOf(field)) return;
      names[`#${field}`] = field === 'tag' ? 'tags' : field;
      values[`:${field}`] = value;
      filters.push(expression);
    };
    addFilter('status', '#status = :status');
    addFilter('operatorId', '#operatorId = :operatorId');
    addFilter('visitorId', '#visitorId = :visitorId');
    addFilter('priority', '#priority = :priority');
    addFilter('tag', 'contains(#tag, :tag)');
    let keyCondition = '#pk = :pk';
    if (since) {
      names['#sk'] = skName;
      values[':since'] = since;
      keyCondition += ' AND #sk >= :since';
    }

    const data: Conversation[] = [];
    let lastReturned: Record<string, unknown> | undefined;
    let overflow = false;
    for (let page = 0; page < MAX_QUERY_PAGES; page++) {
      const result = await db.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: listing.index,
          KeyConditionExpression: keyCondition,
          ...(filters.length ? { FilterExpression: filters.join(' AND ') } : {}),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ScanIndexForward: false,
          // One more than the page tells whether another page exists without a further read.
          Limit: filters.length ? Math.max(50, query.limit * 2) : query.limit + 1,
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of result.Items ?? []) {
        if (data.length === query.limit) {
          overflow = true;
          break;
        }
        data.push(toConversation(item));
        lastReturned = item;
      }
      startKey = result.LastEvaluatedKey;
      if (overflow || !startKey) break;
    }
    // After an overflow, resume right after the last item returned; otherwise where the reads
    // stopped (everything before it was returned or filtered out).
    const resumeAt =
      overflow && lastReturned
        ? {
            pk: lastReturned.pk,
            sk: lastReturned.sk,
            [pkName]: lastReturned[pkName],
            [skName]: lastReturned[skName],
          }
        : startKey;
    const nextCursor = resumeAt ? encodeCursor(orgId, queryId, resumeAt) : null;
    return { data, nextCursor };
  },
};

function indexOf(field: keyof ListConversationsQuery): string | undefined {
  return { visitorId: 'gsi4', operatorId: 'gsi3', status: 'gsi2' }[field as string];
}
