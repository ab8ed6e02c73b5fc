import { ConditionalCheckFailedException, TransactionConflictException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { type StoredConversation, withMessage } from '../conversations/state';
import { NotFoundError } from '../errors';
import type { Message } from '../schemas/message';
import { db, tableName } from './client';
import {
  claimedByAnother,
  FIRST_RESPONSE_CLAIM,
  firstResponseClaimOf,
  recordFirstResponse,
} from './conversation-first-response';
import { LIVE_CONDITION, nullOrAbsent, storedConversationOf } from './conversation-item';
import { mustBeLive } from './conversation-reads';
import { keys } from './keys';
import { putMessage } from './messages';
import { RetryBudget, retryTransient, transact, type Write } from './transaction';

/**
 * The append protocol: how a message post changes its conversation without racing other posts.
 *
 * Every other change of a conversation is read, changed and written on `rev` (conversation-mutate.ts):
 * two writers that read the same `rev` cannot both commit. Posts do not work that way, because a busy
 * conversation takes many at once and they would keep cancelling each other. A post instead:
 *
 * 1. **Commits the message without the conversation.** One transaction holds the message, its
 *    `message.created` event and its checks (the reply-to message, the uploads it claims): new items
 *    only, never the conversation item nor a counter every post shares (the day counters are
 *    counted from the stream, stats-stream.ts). In AWS two transactions
 *    on one item at once cancel one of them, so a conversation item in every post's transaction
 *    made a busy conversation a single lane that 50 concurrent posts could not pass within 2 s.
 * 2. **Counts by ADD, without `rev`, in one UpdateItem** (`countWrite`) after the commit:
 *    `messageCount` and `unreadCount` go up by ADD, the unread flag is set, and the first visitor
 *    message's time is set with `if_not_exists`. Single writes of one item never cancel each other
 *    (DynamoDB runs them one after another), so concurrent posts commute; only a transaction on the
 *    item at that moment (a PATCH) refuses it, and the post tries again within its budget. Its only
 *    condition is that the conversation is live: one deleted meanwhile answers 404, and the message
 *    committed in step 1 goes with the conversation's purge. `rev` and `version` stay: a message is
 *    not a change an `If-Match` writer must have seen. A state writer that sets one of these fields
 *    conditions itself on `messageCount` and `lastMessageAt` instead (`APPEND_FIELDS` in
 *    conversation-item.ts), so it never overwrites a post's count. A crash between the two steps
 *    leaves the message uncounted, and an answer DynamoDB lost and the SDK sent again could count it
 *    twice: the price of a busy conversation taking every post, both rare and named here.
 * 2b. **Moves the last message forward only, folded or after.** The preview, `lastMessageAt`,
 *    `updatedAt` and the recency keys move in that same UpdateItem, on the condition that nothing
 *    newer is there and the operator is the one read (`lastMessageMove`). When that condition fails
 *    nothing was written: the count goes again without the move, and then, only when the item it
 *    returns shows no newer message, the conditional UpdateItem of the move (`moveLastMessage`).
 *    A crash in between leaves the previous preview until the next message moves it.
 * 3. **Claims the first response.** An operator message that would be the first response writes its
 *    claim with `if_not_exists` in the same UpdateItem: the first to count wins, no one is cancelled.
 *    After the commit the winner (or any later post, when the winner crashed) records
 *    `firstResponseTimeMs` once (conversation-first-response.ts).
 */

/**
 * Moving the last message to `message`: the preview, its time, `updatedAt`, the recency listing keys
 * and the incremental-sync entry, on the condition that nothing newer has landed (and that the
 * operator whose index entry moves is still the one read in `seen`).
 */
function lastMessageMove(seen: StoredConversation, message: Message) {
  const next = withMessage(seen, message);
  const recency = keys.conversationIndexes({ orgId: seen.organizationId, ...next }).gsi2sk;
  const updated = keys.conversationUpdated(seen.organizationId, message.createdAt, seen.id);
  const values: Record<string, unknown> = {
    ':preview': next.lastMessage,
    ':lastAt': message.createdAt,
    ':recency': recency,
    ':syncPk': updated.gsi1pk,
    ':syncSk': updated.gsi1sk,
  };
  const set = [
    'lastMessage = :preview',
    'lastMessageAt = :lastAt',
    'updatedAt = :lastAt',
    'gsi2sk = :recency',
    'gsi1pk = :syncPk',
    'gsi1sk = :syncSk',
  ];
  let condition = 'lastMessageAt <= :lastAt';
  if (seen.operatorId) {
    set.push('gsi3sk = :recency');
    values[':operator'] = seen.operatorId;
    condition += ' AND operatorId = :operator';
  } else condition += ` AND ${nullOrAbsent('operatorId')}`;
  return { set, values, condition };
}

/**
 * What a message post changes on the conversation, in one UpdateItem: the counts go up by ADD, an
 * unread visitor message sets the unread flag, and the first visitor message sets its time if none
 * is set yet (`if_not_exists`: the first to count wins) — all condition-free but for the
 * conversation being live, so concurrent posts commute. A conversation stored with an explicit null
 * there (before this was so) is conditioned on it instead. With `move`, the last message moves too,
 * on its condition (`lastMessageMove`).
 */
function countWrite(
  current: StoredConversation,
  legacyNullFirstVisitor: boolean,
  message: Message,
  move: boolean,
) {
  const values: Record<string, unknown> = { ':one': 1, ':null': null };
  const add = ['messageCount :one'];
  const set: string[] = [];
  let condition = LIVE_CONDITION;
  if (message.senderType === 'visitor') {
    if (!message.isRead) {
      add.push('unreadCount :one');
      set.push('hasUnreadMessages = :true');
      values[':true'] = true;
    }
    if (current.firstVisitorMessageAt === null) {
      values[':at'] = message.createdAt;
      if (legacyNullFirstVisitor) {
        set.push('firstVisitorMessageAt = :at');
        condition += ` AND ${nullOrAbsent('firstVisitorMessageAt')}`;
      } else set.push('firstVisitorMessageAt = if_not_exists(firstVisitorMessageAt, :at)');
    }
  }
  const claim = firstResponseClaimOf(current, message);
  if (claim) {
    set.push(`${FIRST_RESPONSE_CLAIM} = if_not_exists(${FIRST_RESPONSE_CLAIM}, :claim)`);
    values[':claim'] = claim;
  }
  if (move) {
    const moved = lastMessageMove(current, message);
    set.push(...moved.set);
    Object.assign(values, moved.values);
    condition += ` AND ${moved.condition}`;
  }
  return {
    TableName: tableName,
    Key: keys.conversation(current.organizationId, current.id),
    UpdateExpression: `${set.length ? `SET ${set.join(', ')} ` : ''}ADD ${add.join(', ')}`,
    ConditionExpression: condition,
    ExpressionAttributeValues: values,
    ReturnValues: 'ALL_NEW' as const,
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
}

/**
 * Step 2 of the protocol: the conversation counts the committed message, with the move folded in
 * while nothing newer is there. A failed condition wrote nothing: a deleted conversation is 404;
 * otherwise (a newer message, another operator, a first visitor time set meanwhile) the count goes
 * again from the item as it stood, without the move. A transaction holding the item (a PATCH)
 * refuses it for a moment: again, within the budget after the commit. Returns the item after the count
 * and whether the last message moved with it.
 */
async function countMessage(
  item: Record<string, unknown>,
  message: Message,
  budget: RetryBudget,
): Promise<{ after: Record<string, unknown>; moved: boolean }> {
  let seen = item;
  let move = !newerThere(item, message);
  for (let attempt = 1; ; attempt++) {
    const current = storedConversationOf(seen);
    try {
      const { Attributes } = await retryTransient(
        () =>
          db.send(new UpdateCommand(countWrite(current, seen.firstVisitorMessageAt === null, message, move))),
        budget,
      );
      return { after: Attributes ?? seen, moved: move };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const old = error.Item ? unmarshall(error.Item) : undefined;
      if (!old || old.deletedAt) throw new NotFoundError('Conversation not found');
      if (!move && attempt > 3) throw error;
      seen = old;
      move = false;
    }
  }
}

/** A newer message than `message` is already the last one of `item` (ties broken by id). */
function newerThere(item: Record<string, unknown>, message: Message): boolean {
  const at = String(item.lastMessageAt ?? '');
  if (at !== message.createdAt) return at > message.createdAt;
  const last = item.lastMessage as { id?: string } | null | undefined;
  return last?.id !== undefined && last.id >= message.id;
}

/**
 * After the count went without the move (a newer message, or another operator, met it): the
 * conditional move (`lastMessageMove`) from the item the count returned, only while that shows no
 * newer message; a failed condition hands back the item as it stands, and the move is judged
 * again from it. A transaction holding the item refuses the write for a moment: again, within the
 * request's budget. A crash before the move leaves the previous preview until the next message
 * moves it. Returns the item after the move, or as it stood (undefined when deleted).
 */
async function moveLastMessage(
  message: Message,
  counted: Record<string, unknown>,
  budget: RetryBudget,
): Promise<Record<string, unknown> | undefined> {
  let item: Record<string, unknown> | undefined = counted;
  for (let attempt = 1; attempt <= 5 && item && !newerThere(item, message); attempt++) {
    const seen = storedConversationOf(item);
    const { set, values, condition } = lastMessageMove(seen, message);
    try {
      const { Attributes } = await retryTransient(
        () =>
          db.send(
            new UpdateCommand({
              TableName: tableName,
              Key: keys.conversation(seen.organizationId, seen.id),
              UpdateExpression: `SET ${set.join(', ')}`,
              ConditionExpression: `${LIVE_CONDITION} AND ${condition}`,
              ExpressionAttributeValues: { ...values, ':null': null },
              ReturnValues: 'ALL_NEW',
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
          ),
        budget,
      );
      return Attributes;
    } catch (error) {
      // Still held by a transaction past the budget: the preview stays until the next message moves
      // it, and the post, committed and counted, is not failed for it.
      if (error instanceof TransactionConflictException) return item;
      if (!(error instanceof ConditionalCheckFailedException) || !error.Item) throw error;
      // Deleted meanwhile, a newer message landed, or the operator changed: read it as it is now.
      const after = unmarshall(error.Item);
      item = after.deletedAt ? undefined : after;
    }
  }
  return item;
}

/** A message to append, built from the state read, with further actions of its transaction. */
export interface AppendChange<T> {
  message: Message;
  /** Checks that ride in the same transaction (the reply-to message, the operators named, the uploads). */
  writes?: Write[];
  result: T;
}

/**
 * A message post (see the protocol above): read, then one transaction of the message, its event
 * and its checks; then the conversation counts it in one UpdateItem, the last
 * message moving with it or after it; a possible first response is recorded last. Transactions and
 * the count that AWS refuses for a passing reason go again within the request's retry budget.
 */
export async function appendMessage<T>(
  orgId: string,
  conversationId: string,
  build: (current: StoredConversation) => AppendChange<T>,
  options: {
    check?: (conversation: StoredConversation) => void;
    /** Reads that must hold before the post, once the conversation is known to be the caller's. */
    verify?: () => Promise<void>;
  } = {},
): Promise<T> {
  const budget = new RetryBudget();
  // The raw item: a first visitor time stored as an explicit null (older items) is written differently.
  const item = await mustBeLive(orgId, conversationId);
  const current = storedConversationOf(item);
  options.check?.(current);
  await options.verify?.();
  const { message, writes = [], result } = build(current);
  await transact([...putMessage(message), ...writes], { budget });
  // The message is committed from here on: what follows must not turn it into a 503 (a client
  // would post it again), so it has a budget of its own rather than what the commit left.
  const afterCommit = new RetryBudget();
  const { after, moved } = await countMessage(item, message, afterCommit);
  const latest =
    moved || newerThere(after, message) ? after : await moveLastMessage(message, after, afterCommit);
  // Only an operator message can record a first response: its own claim, or an abandoned one.
  // A live claim of another message already read is never this post's to record.
  if (
    message.senderType === 'operator' &&
    current.firstResponseTimeMs === null &&
    !claimedByAnother(item, message)
  ) {
    if (latest) await recordFirstResponse(latest, message);
  }
  return result;
}
