import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { StoredConversation } from '../conversations/state';
import { db, tableName } from './client';
import { conversationStateWrite, storedConversationOf } from './conversation-item';
import { keys } from './keys';
import { backoff } from './transaction';

/**
 * A worker's rewrite of one conversation (a merge's move, an erasure's scrub): read strongly
 * consistent, `change` it (undefined: nothing to write), write it on the `rev` read with one
 * UpdateItem (no request, so no retry budget and no event), and read again when another writer got
 * there first, at most `attempts` times. True when it wrote.
 */
export async function rewriteConversation(
  orgId: string,
  conversationId: string,
  change: (current: StoredConversation) => StoredConversation | undefined,
  attempts: number,
): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    const { Item } = await db.send(
      new GetCommand({
        TableName: tableName,
        Key: keys.conversation(orgId, conversationId),
        ConsistentRead: true,
      }),
    );
    const current = Item && storedConversationOf(Item);
    const next = current && change(current);
    const Update = current && next && conversationStateWrite(current, next).action.Update;
    if (!Update) return false;
    try {
      await db.send(new UpdateCommand(Update));
      return true;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException) || attempt >= attempts) throw error;
      await backoff(attempt);
    }
  }
}
