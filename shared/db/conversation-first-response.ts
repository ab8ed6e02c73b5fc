import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type StoredConversation, withMessage } from '../conversations/state';
import type { Message } from '../schemas/message';
import { db, tableName } from './client';
import { LIVE_CONDITION, nullOrAbsent, storedConversationOf } from './conversation-item';
import { keys } from './keys';
import { retryTransient } from './transaction';

/**
 * The first response is claimed inside the post's own transaction, by `if_not_exists` on an
 * internal attribute: the first candidate to commit wins, and no candidate is ever cancelled or
 * has to try a transaction it then loses. The winner then records `firstResponseTimeMs`
 * (`recordFirstResponse`), which the day counters take from the stream (stats-stream.ts). The claim carries what that step needs, so any later post can
 * finish the step if its winner crashed before it.
 */
export const FIRST_RESPONSE_CLAIM = 'firstResponseClaim';

export interface FirstResponseClaim {
  messageId: string;
  createdAt: string;
  timeMs: number;
}

/** The claim a message makes when it would be the first response of `current`, or undefined. */
export function firstResponseClaimOf(
  current: StoredConversation,
  message: Message,
): FirstResponseClaim | undefined {
  if (message.senderType !== 'operator' || current.firstResponseTimeMs !== null) return undefined;
  const timeMs = withMessage(current, message).firstResponseTimeMs;
  return timeMs === null ? undefined : { messageId: message.id, createdAt: message.createdAt, timeMs };
}

/** How long a claim may wait for its winner before another post finishes recording it. */
const ABANDONED_CLAIM_MS = 60_000;

/**
 * After the post commits, with the item as it stood afterwards: when a first response is claimed
 * and not yet recorded, and the claim is this message's (or an abandoned one), its time is set,
 * conditioned on the claim and on nothing being recorded yet, so it is recorded (and counted from
 * the stream) exactly once however many posts try.
 */
export async function recordFirstResponse(item: Record<string, unknown>, message: Message): Promise<void> {
  const claim = item[FIRST_RESPONSE_CLAIM] as FirstResponseClaim | undefined;
  if (!claim || (item.firstResponseTimeMs ?? null) !== null || item.deletedAt) return;
  const abandoned = Date.parse(message.createdAt) - Date.parse(claim.createdAt) > ABANDONED_CLAIM_MS;
  if (claim.messageId !== message.id && !abandoned) return;
  const conversation = storedConversationOf(item);
  try {
    await retryTransient(() =>
      db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.conversation(conversation.organizationId, conversation.id),
          UpdateExpression: 'SET firstResponseTimeMs = :frt',
          ConditionExpression: `${LIVE_CONDITION} AND ${nullOrAbsent('firstResponseTimeMs')} AND #claim.messageId = :claimed`,
          ExpressionAttributeNames: { '#claim': FIRST_RESPONSE_CLAIM },
          ExpressionAttributeValues: { ':frt': claim.timeMs, ':claimed': claim.messageId, ':null': null },
        }),
      ),
    );
  } catch (error) {
    // Recorded by another post meanwhile, or the conversation deleted: nothing left to record.
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

/** `item` holds another message's first-response claim that is not abandoned by the time of `message`. */
export function claimedByAnother(item: Record<string, unknown>, message: Message): boolean {
  const claim = item[FIRST_RESPONSE_CLAIM] as FirstResponseClaim | undefined;
  return (
    claim !== undefined &&
    claim.messageId !== message.id &&
    Date.parse(message.createdAt) - Date.parse(claim.createdAt) <= ABANDONED_CLAIM_MS
  );
}
