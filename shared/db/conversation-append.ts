import { ConditionalCheckFailedException, TransactionConflictException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { type StoredConversation, withMessage } from '../conversations/state';
import type { Message } from '../schemas/message';
import { db, tableName } from './client';
import {
  claimedByAnother,
  FIRST_RESPONSE_CLAIM,
  firstResponseClaimOf,
  recordFirstResponse,
} from './conversation-first-response';
import { LIVE_CONDITION, nullOrAbsent, storedConversationOf } from './conversation-item';
import { liveItem, mustBeLive } from './conversation-reads';
import { incrementWrites } from './increments';
import { keys } from './keys';
import { putMessage } from './messages';
import { stats } from './stats';
import { backoff, ConcurrentChangeError, RetryBudget, transact, type Write } from './transaction';

/**
 * The append protocol: how a message post changes its conversation without racing other posts.
 *
 * Every other change of a conversation is read, changed and written on `rev` (conversation-mutate.ts):
 * two writers that read the same `rev` cannot both commit. Posts do not work that way, because a busy
 * conversation takes many at once and they would keep cancelling each other. A post instead:
 *
 * 1. **Counts by ADD, without `rev`.** One transaction holds the message, its `message.created`
 *    event, the day counters and the conversation's append Update (`appendWrite`): `messageCount`
 *    and `unreadCount` go up by ADD, the unread flag is set, and the first visitor message's time is
 *    set with `if_not_exists`. The Update's only condition is that the conversation is live, so
 *    concurrent posts commute and a post never reads-modifies-writes what another post moves. `rev`
 *    and `version` stay: a message is not a change an `If-Match` writer must have seen. A state
 *    writer that sets one of these fields conditions itself on `messageCount` and `lastMessageAt`
 *    instead (`APPEND_FIELDS` in conversation-item.ts), so it never overwrites a post's count.
 * 2. **Moves the last message forward only, folded or after the commit.** The preview,
 *    `lastMessageAt`, `updatedAt` and the recency keys move in that same Update, on the condition that
 *    nothing newer is there and the operator is the one read (`lastMessageMove`). When that condition
 *    fails nothing committed (`MoveNotApplied`): the post tries again without the move and, once it
 *    committed, makes one strong read and, only when that shows no newer message, the conditional
 *    UpdateItem (`moveLastMessage`). A crash in between leaves the previous preview until the next
 *    message moves it.
 * 3. **Claims the first response.** An operator message that would be the first response writes its
 *    claim with `if_not_exists` in the same Update: the first to commit wins, no one is cancelled.
 *    After the commit the winner (or any later post, when the winner crashed) records
 *    `firstResponseTimeMs` and its day counters once (conversation-first-response.ts).
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
 * A post's transaction that carried the last-message move was cancelled by its conversation action:
 * with the item as it stood then (undefined if DynamoDB did not hand it back).
 */
class MoveNotApplied extends Error {
  constructor(readonly item: Record<string, unknown> | undefined) {
    super('The last message could not move');
  }
}

/**
 * What a message post changes on the conversation, in its transaction: the counts go up by ADD, an
 * unread visitor message sets the unread flag, and the first visitor message sets its time if none
 * is set yet (`if_not_exists`: the first to commit wins) — all condition-free but for the
 * conversation being live, so concurrent posts commute and never cancel each other here. A
 * conversation stored with an explicit null there (before this was so) is conditioned on it
 * instead. With `move`, the last message moves too, on its condition (`lastMessageMove`): a
 * cancelled transaction is then `MoveNotApplied`, and the post tries again without it.
 */
function appendWrite(
  current: StoredConversation,
  legacyNullFirstVisitor: boolean,
  message: Message,
  move: boolean,
): Write {
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
    action: {
      Update: {
        TableName: tableName,
        Key: keys.conversation(current.organizationId, current.id),
        UpdateExpression: `${set.length ? `SET ${set.join(', ')} ` : ''}ADD ${add.join(', ')}`,
        ConditionExpression: condition,
        ExpressionAttributeValues: values,
        ...(move ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
      },
    },
    ...(move ? { onConditionFailed: (item) => new MoveNotApplied(item) } : {}),
  };
}

/** A newer message than `message` is already the last one of `item` (ties broken by id). */
function newerThere(item: Record<string, unknown>, message: Message): boolean {
  const at = String(item.lastMessageAt ?? '');
  if (at !== message.createdAt) return at > message.createdAt;
  const last = item.lastMessage as { id?: string } | null | undefined;
  return last?.id !== undefined && last.id >= message.id;
}

/**
 * After a post committed without the move (a busy conversation): one strongly consistent read,
 * and only when it shows no newer message, the conditional move (`lastMessageMove`). Among posts
 * landing at once most are overtaken before their commit: the read, which neither waits for nor
 * conflicts with the writes on the item, spares them a write that would fail its condition. A
 * crash between the commit and the move leaves the previous preview until the next message moves
 * it. Returns the item as it stood after the post's commit (undefined when deleted).
 */
async function moveLastMessage(
  orgId: string,
  conversationId: string,
  message: Message,
): Promise<Record<string, unknown> | undefined> {
  let item = await liveItem(orgId, conversationId);
  for (let attempt = 1; attempt <= 5 && item && !newerThere(item, message); attempt++) {
    const seen = storedConversationOf(item);
    const { set, values, condition } = lastMessageMove(seen, message);
    try {
      const { Attributes } = await db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.conversation(seen.organizationId, seen.id),
          UpdateExpression: `SET ${set.join(', ')}`,
          ConditionExpression: `${LIVE_CONDITION} AND ${condition}`,
          ExpressionAttributeValues: { ...values, ':null': null },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return Attributes;
    } catch (error) {
      // In AWS a write to an item that a transaction is changing is refused at once: try again.
      if (error instanceof TransactionConflictException) {
        await backoff(attempt);
        continue;
      }
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
 * A message post (see the protocol above): read, then one transaction of the message, its event,
 * the append Update and the day counters; the last message moves in it or after it, and a possible
 * first response is recorded after it. Only two transactions on the same item at once (AWS cancels
 * one) wait and try again, within the request's retry budget.
 */
export async function appendMessage<T>(
  orgId: string,
  conversationId: string,
  build: (current: StoredConversation) => AppendChange<T>,
  options: { check?: (conversation: StoredConversation) => void } = {},
): Promise<T> {
  const budget = new RetryBudget();
  let change: (AppendChange<T> & { items: Write[] }) | undefined;
  let foldMove = true;
  // The item handed back by a transaction whose move lost: the next attempt starts from it.
  let known: Record<string, unknown> | undefined;
  for (let attempt = 1; ; attempt++) {
    // The raw item: a first visitor time stored as an explicit null (older items) is written differently.
    const item = known && !known.deletedAt ? known : await mustBeLive(orgId, conversationId);
    known = undefined;
    const current = storedConversationOf(item);
    options.check?.(current);
    // Built once: a retry keeps the message's id, time and event, so exactly one of each commits.
    if (!change) {
      const built = build(current);
      change = { ...built, items: [...putMessage(built.message), ...(built.writes ?? [])] };
    }
    const { message, items, result } = change;
    // A newer message already there (a retry after losing the move): nothing to move, ever.
    const stale = newerThere(item, message);
    const move = foldMove && !stale;
    // The first response is recorded after the commit: here the message counts only as a message.
    const counted = { ...withMessage(current, message), firstResponseTimeMs: current.firstResponseTimeMs };
    try {
      await transact(
        [
          appendWrite(current, item.firstVisitorMessageAt === null, message, move),
          ...items,
          ...incrementWrites(stats.messagePosted(current, counted, message)),
        ],
        { budget },
      );
    } catch (error) {
      if (error instanceof MoveNotApplied) {
        // Something moved meanwhile (a newer message, the operator) or the conversation went:
        // nothing committed; the next attempt, from the item as it stood, goes without the move.
        foldMove = false;
        known = error.item;
        continue;
      }
      if (!(error instanceof ConcurrentChangeError) || !(await budget.pause(attempt))) throw error;
      continue;
    }
    const after = move || stale ? undefined : await moveLastMessage(orgId, conversationId, message);
    // Only an operator message can record a first response: its own claim, or an abandoned one.
    // A live claim of another message already read is never this post's to record.
    if (
      message.senderType === 'operator' &&
      current.firstResponseTimeMs === null &&
      !claimedByAnother(item, message)
    ) {
      const latest = after ?? (await liveItem(orgId, conversationId));
      if (latest) await recordFirstResponse(latest, message);
    }
    return result;
  }
}
