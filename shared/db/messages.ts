import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { uuidv7 } from '../ids';
import { sanitizeText, searchVectorOf } from '../sanitize/text';
import type { Message } from '../schemas/message';
import { messageProjection } from '../schemas/projections';
import { batchGet } from './batch';
import { db, tableName } from './client';
import { eventWrite, realtimeWrite } from './events';
import { keys } from './keys';
import { project } from './project';
import { childrenQuery, queryPrefix } from './query';
import { mustExist, type Write } from './transaction';
import type { AttachmentMetadata } from './uploads';

export type { Message };

const projectMessage = project<Message>(messageProjection);

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

/**
 * The stored message. No index entry: "mark read" finds the unread ones in the conversation's own
 * partition (`unreadToMark`), so a post and a read-state change write no index.
 */
export function messageItem(message: Message, extra: { editCount?: number } = {}) {
  return {
    ...keys.message(message.orgId, message.conversationId, message.id),
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
    eventWrite(message.orgId, 'message.created', message),
  ];
}

/** The message moved on (edited, read or deleted) between a read and an edit's write: read again. */
export class MessageChangedError extends Error {}

/** How many prior versions of a message are kept (a ring of revision slots). */
const KEPT_REVISIONS = 20;

export interface StoredMessage extends Message {
  editCount: number;
}

function storedOf(item: Record<string, unknown>): StoredMessage {
  return { ...toMessage(item), editCount: Number(item.editCount ?? 0) };
}

/** What a read-state change needs of a message: where it is. */
export type MessageRef = Pick<Message, 'orgId' | 'conversationId' | 'id'>;

/** Messages per page of `unreadFromTable`: small first (unread ones are mostly the newest), then doubling. */
const FIRST_TABLE_PAGE = 50;
const LARGEST_TABLE_PAGE = 1_600;

/**
 * Adds to `found` the conversation's unread visitor messages, newest first, until `wanted` are
 * known or its messages end: strongly consistent Query pages of the conversation's own partition
 * (`MSG#`), filtered to unread visitor messages not deleted and projecting only the id (the filter
 * reads the rest; the read units are those of the items read, which the early stop keeps few).
 */
async function unreadFromTable(
  orgId: string,
  conversationId: string,
  found: Map<string, MessageRef>,
  wanted: number,
): Promise<void> {
  const pk = keys.conversationPartition(orgId, conversationId);
  let startKey: Record<string, unknown> | undefined;
  let pageSize = FIRST_TABLE_PAGE;
  do {
    const page = await db.send(
      new QueryCommand({
        ...childrenQuery(pk, keys.messagePrefix, { ':visitor': 'visitor', ':false': false, ':null': null }),
        FilterExpression:
          '#sender = :visitor AND #read = :false AND (attribute_not_exists(#deleted) OR #deleted = :null)',
        ProjectionExpression: '#id',
        ExpressionAttributeNames: {
          '#id': 'id',
          '#sender': 'senderType',
          '#read': 'isRead',
          '#deleted': 'deletedAt',
        },
        ConsistentRead: true,
        ScanIndexForward: false,
        Limit: pageSize,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) {
      const id = String(item.id);
      if (!found.has(id)) found.set(id, { orgId, conversationId, id });
      if (found.size >= wanted) return;
    }
    startKey = page.LastEvaluatedKey;
    pageSize = Math.min(pageSize * 2, LARGEST_TABLE_PAGE);
  } while (startKey);
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
   * Up to `limit` unread visitor messages of the conversation (not deleted), as the table holds them
   * now, for "mark read". `unreadCount` is the conversation's own count from the strongly consistent
   * read just before (a post in between makes the caller's conditioned write fail and read again),
   * so it says how many to find: the conversation's messages are read newest first (unread visitor
   * messages are the newest ones but for those marked unread again), strongly consistent, until that
   * many are found or the messages end (`unreadFromTable`). No index: one would cost every visitor
   * message an entry to write and later remove, and would trail the table anyway.
   */
  async unreadToMark(
    orgId: string,
    conversationId: string,
    unreadCount: number,
    limit: number,
  ): Promise<{ messages: MessageRef[]; more: boolean }> {
    const wanted = Math.min(limit, unreadCount);
    const found = new Map<string, MessageRef>();
    if (wanted > 0) await unreadFromTable(orgId, conversationId, found, wanted);
    // The table was read until `wanted` were found or to its end: fewer than a chunk means no more.
    return { messages: [...found.values()].slice(0, limit), more: found.size >= limit };
  },

  /**
   * Flips the read flag of a visitor message only if it is still the other way round and not
   * deleted, so concurrent markers never count a message twice. Marking read also removes the
   * unread index entry messages written before it was given up still carry (none is written now).
   */
  readStateWrite(message: MessageRef, isRead: boolean): Write {
    return {
      action: {
        Update: {
          TableName: tableName,
          Key: keys.message(message.orgId, message.conversationId, message.id),
          UpdateExpression: isRead ? 'SET isRead = :isRead REMOVE gsi1pk, gsi1sk' : 'SET isRead = :isRead',
          ConditionExpression: 'isRead = :was AND (attribute_not_exists(deletedAt) OR deletedAt = :null)',
          ExpressionAttributeValues: {
            ':isRead': isRead,
            ':was': !isRead,
            ':null': null,
          },
        },
      },
    };
  },

  /** A transaction condition that the message exists in the conversation, failing with `error` otherwise. */
  existsCheck(orgId: string, conversationId: string, messageId: string, error: () => Error): Write {
    return mustExist(keys.message(orgId, conversationId, messageId), error);
  },

  /**
   * An edit as actions of one transaction: the message (only if no other edit, read or deletion
   * came between, else MessageChangedError), its prior version in the revision ring, `message.updated`
   * and the realtime `message_edited` notice.
   */
  editWrites(current: StoredMessage, edited: Message, editedBy: string, visitorId: string): Write[] {
    const { orgId, conversationId, id } = current;
    return [
      {
        action: {
          Update: {
            TableName: tableName,
            Key: keys.message(orgId, conversationId, id),
            UpdateExpression:
              'SET content = :content, searchVector = :searchVector, isEdited = :true, editedAt = :editedAt, editCount = editCount + :one',
            ConditionExpression:
              'editCount = :seen AND (attribute_not_exists(deletedAt) OR deletedAt = :null)',
            ExpressionAttributeValues: {
              ':content': edited.content,
              ':searchVector': edited.searchVector,
              ':true': true,
              ':editedAt': edited.editedAt,
              ':one': 1,
              ':seen': current.editCount,
              ':null': null,
            },
          },
        },
        onConditionFailed: () => new MessageChangedError(),
      },
      {
        action: {
          Put: {
            TableName: tableName,
            Item: {
              ...keys.revision(orgId, conversationId, id, current.editCount % KEPT_REVISIONS),
              entity: 'revision',
              messageId: id,
              content: current.content,
              editedAt: edited.editedAt,
              editedBy,
            },
          },
        },
      },
      eventWrite(orgId, 'message.updated', edited),
      realtimeWrite(orgId, {
        type: 'message_edited',
        audience: 'conversation',
        conversationId,
        visitorId,
        payload: { conversationId, message: edited },
      }),
    ];
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
