import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { uuidv7 } from '../ids';
import { sanitizeText, searchVectorOf } from '../sanitize/text';
import type { Message } from '../schemas/message';
import { messageProjection } from '../schemas/projections';
import { batchGet } from './batch';
import { db, tableName } from './client';
import { eventItem } from './events';
import { keys } from './keys';
import { projectAs } from './project';
import { queryPrefix } from './query';
import type { Write } from './transaction';
import type { AttachmentMetadata } from './uploads';

export type { Message };

const projectMessage = projectAs<Message>(messageProjection);

/** Messages stored before attachments existed have none. */
export const toMessage = (item: object): Message => {
  const message = projectMessage(item);
  message.attachments ??= [];
  return message;
};

export function newMessage(input: {
  orgId: string;
  conversationId: string;
  senderType: Message['senderType'];
  senderId: string;
  content: string;
  now: string;
  replyToId?: string | null | undefined;
  mentions?: readonly string[] | null | undefined;
  attachments?: readonly AttachmentMetadata[];
}): Message {
  const content = sanitizeText(input.content);
  const attachments = [...(input.attachments ?? [])];
  return {
    id: uuidv7(Date.parse(input.now)),
    orgId: input.orgId,
    conversationId: input.conversationId,
    senderType: input.senderType,
    senderId: input.senderId,
    content,
    type: attachments.length > 0 && content === '' ? 'file' : 'text',
    metadata: {},
    isRead: false,
    isEdited: false,
    editedAt: null,
    createdAt: input.now,
    deletedAt: null,
    replyToId: input.replyToId ?? null,
    mentions: input.mentions?.length ? [...new Set(input.mentions)] : null,
    searchVector: searchVectorOf(content),
    attachments,
  };
}

/** The stored message; an unread visitor message also sits in the sparse unread index. */
export function messageItem(message: Message, extra: { editCount?: number } = {}) {
  const unread = message.senderType === 'visitor' && !message.isRead && !message.deletedAt;
  return {
    ...keys.message(message.orgId, message.conversationId, message.id),
    ...(unread ? keys.unreadMessage(message.orgId, message.conversationId, message.id) : {}),
    entity: 'message',
    editCount: extra.editCount ?? 0,
    ...message,
  };
}

/** A new message and its `message.created` event, as actions of the conversation's transaction. */
export function putMessage(message: Message): Write[] {
  return [
    {
      action: {
        Put: {
          TableName: tableName,
          Item: messageItem(message),
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    },
    { action: { Put: { TableName: tableName, Item: eventItem(message.orgId, 'message.created', message) } } },
  ];
}

export interface StoredMessage extends Message {
  editCount: number;
}

function storedOf(item: Record<string, unknown>): StoredMessage {
  return { ...toMessage(item), editCount: Number(item.editCount ?? 0) };
}

export const messages = {
  revisions: (orgId: string, conversationId: string, messageId: string) =>
    revisionsOf(orgId, conversationId, messageId),

  async get(orgId: string, conversationId: string, messageId: string): Promise<StoredMessage | undefined> {
    const { Item } = await db.send(
      new GetCommand({
        TableName: tableName,
        Key: keys.message(orgId, conversationId, messageId),
        ConsistentRead: true,
      }),
    );
    return Item ? storedOf(Item) : undefined;
  },

  /** Messages of the conversation by id, in one or more BatchGetItem calls of 100 keys. */
  async getMany(
    orgId: string,
    conversationId: string,
    messageIds: readonly string[],
  ): Promise<Map<string, StoredMessage>> {
    const items = await batchGet(
      messageIds.map((id) => keys.message(orgId, conversationId, id)),
      { consistent: true },
    );
    const found = new Map<string, StoredMessage>();
    for (const item of items) found.set(String(item.id), storedOf(item));
    return found;
  },

  /**
   * Ids of unread visitor messages, oldest first, from the sparse index (keys only: the caller reads
   * the messages themselves strongly, since the index trails the table).
   */
  async unreadIds(orgId: string, conversationId: string, limit: number): Promise<string[]> {
    const partition = keys.unreadMessagesPartition(orgId, conversationId);
    const { Items = [] } = await db.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: partition.index,
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': partition.pk },
        Limit: limit,
      }),
    );
    return Items.map((entry) => String(entry.gsi1sk));
  },

  /**
   * Flips the read flag of a visitor message (and its place in the unread index) only if it is still
   * the other way round and not deleted, so concurrent markers never count a message twice.
   */
  readStateWrite(message: Message, isRead: boolean): Write {
    const unreadKeys = keys.unreadMessage(message.orgId, message.conversationId, message.id);
    return {
      action: {
        Update: {
          TableName: tableName,
          Key: keys.message(message.orgId, message.conversationId, message.id),
          UpdateExpression: isRead
            ? 'SET isRead = :isRead REMOVE gsi1pk, gsi1sk'
            : 'SET isRead = :isRead, gsi1pk = :gsi1pk, gsi1sk = :gsi1sk',
          ConditionExpression: 'isRead = :was AND (attribute_not_exists(deletedAt) OR deletedAt = :null)',
          ExpressionAttributeValues: {
            ':isRead': isRead,
            ':was': !isRead,
            ':null': null,
            ...(isRead ? {} : { ':gsi1pk': unreadKeys.gsi1pk, ':gsi1sk': unreadKeys.gsi1sk }),
          },
        },
      },
    };
  },
};

export interface Revision {
  content: string;
  editedAt: string;
  editedBy?: string;
}

/** The kept prior versions of a message (one Query of its ring), newest first. */
export async function revisionsOf(
  orgId: string,
  conversationId: string,
  messageId: string,
): Promise<Revision[]> {
  const items = await queryPrefix(
    keys.conversationPartition(orgId, conversationId),
    keys.revisionPrefix(messageId),
  );
  return items
    .map((item) => ({
      content: String(item.content),
      editedAt: String(item.editedAt),
      ...(item.editedBy ? { editedBy: String(item.editedBy) } : {}),
    }))
    .sort((a, b) => b.editedAt.localeCompare(a.editedAt));
}
