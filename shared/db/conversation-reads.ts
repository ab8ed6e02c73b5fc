import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { StoredConversation } from '../conversations/state';
import { NotFoundError } from '../errors';
import type { Message } from '../schemas/message';
import { batchGet } from './batch';
import { db, tableName } from './client';
import { storedConversationOf } from './conversation-item';
import { keys } from './keys';
import { toMessage } from './messages';

/** Reads of live conversations: strongly consistent where a writer or a client reads its own writes. */

/** The stored item of a live conversation, strongly consistent; undefined when missing or soft-deleted. */
export async function liveItem(
  orgId: string,
  conversationId: string,
): Promise<Record<string, unknown> | undefined> {
  const { Item } = await db.send(
    new GetCommand({
      TableName: tableName,
      Key: keys.conversation(orgId, conversationId),
      ConsistentRead: true,
    }),
  );
  return Item && !Item.deletedAt ? Item : undefined;
}

/** The item of a live conversation, or 404. */
export async function mustBeLive(orgId: string, conversationId: string): Promise<Record<string, unknown>> {
  const item = await liveItem(orgId, conversationId);
  if (!item) throw new NotFoundError('Conversation not found');
  return item;
}

/** A strongly consistent read of a live conversation (404 when missing or soft-deleted). */
export async function liveConversation(orgId: string, conversationId: string): Promise<StoredConversation> {
  return storedConversationOf(await mustBeLive(orgId, conversationId));
}

/**
 * One strongly consistent GetItem (a client reads its own writes); soft-deleted conversations are
 * missing.
 */
export async function getConversation(
  orgId: string,
  conversationId: string,
): Promise<StoredConversation | undefined> {
  const item = await liveItem(orgId, conversationId);
  return item && storedConversationOf(item);
}

/**
 * Live conversations of the organization by id, in BatchGetItem calls of 100 keys; soft-deleted and
 * missing ones are left out.
 */
export async function conversationsById(
  orgId: string,
  conversationIds: readonly string[],
  options: { consistent: boolean },
): Promise<Map<string, StoredConversation>> {
  const items = conversationIds.length
    ? await batchGet(
        conversationIds.map((id) => keys.conversation(orgId, id)),
        options,
      )
    : [];
  const found = new Map<string, StoredConversation>();
  for (const item of items) {
    if (!item.deletedAt) found.set(String(item.id), storedConversationOf(item));
  }
  return found;
}

/**
 * A conversation and one of its messages in one strongly consistent BatchGetItem: one request for a
 * read of one child. The conversation is undefined when missing or soft-deleted.
 */
export async function conversationWithMessage(
  orgId: string,
  conversationId: string,
  messageId: string,
): Promise<{ conversation: StoredConversation | undefined; message: Message | undefined }> {
  const conversationKey = keys.conversation(orgId, conversationId);
  const messageKey = keys.message(orgId, conversationId, messageId);
  const items = await batchGet([conversationKey, messageKey], { consistent: true });
  const stored = items.find((item) => item.sk === conversationKey.sk);
  const message = items.find((item) => item.sk === messageKey.sk);
  return {
    conversation: stored && !stored.deletedAt ? storedConversationOf(stored) : undefined,
    message: message ? toMessage(message) : undefined,
  };
}
