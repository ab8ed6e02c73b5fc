import { ConditionalCheckFailedException, TransactionConflictException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { clock } from '../clock';
import { type StoredConversation, withMessage } from '../conversations/state';
import { NotFoundError, PreconditionFailedError } from '../errors';
import { uuidv7 } from '../ids';
import type { Conversation, CreateConversationInput } from '../schemas/conversation';
import type { Message } from '../schemas/message';
import { conversationProjection } from '../schemas/projections';
import type { Visitor } from '../schemas/visitor';
import { assignmentEntry, auditWrite } from './audit';
import { batchGet } from './batch';
import { db, tableName } from './client';
import { eventWrite } from './events';
import { incrementWrites } from './increments';
import { keys } from './keys';
import { newMessage, putMessage, toMessage } from './messages';
import { project, projectState } from './project';
import { stats } from './stats';
import { teamLoadWrites } from './team-load';
import {
  backoff,
  ConcurrentChangeError,
  RetryBudget,
  retryOnConflict,
  transact,
  type Write,
} from './transaction';

export type { Conversation, StoredConversation };

/** Who starts a conversation, and as whom its first message is written. */
export type ConversationAuthor =
  | { kind: 'visitor'; visitorId: string }
  | { kind: 'operator'; operatorId: string }
  | { kind: 'apiKey' };

export const toConversation: (item: object) => Conversation = project<Conversation>(conversationProjection);

/** Every field of the stored state: the resource's, then the service's own. */
const projectStored = projectState<StoredConversation>(conversationProjection, [
  'rev',
  'firstVisitorMessageAt',
  'locale',
  'activeSurvey',
]);

export function storedConversationOf(item: Record<string, unknown>): StoredConversation {
  const stored = projectStored(item);
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
  const { firstVisitorMessageAt, ...state } = conversation;
  return {
    ...keys.conversation(orgId, conversation.id),
    ...(conversation.deletedAt ? {} : keys.conversationIndexes({ orgId, ...conversation })),
    // Incremental sync: kept when deleted, so a sync sees the deletion.
    ...keys.conversationUpdated(orgId, conversation.updatedAt, conversation.id),
    entity: 'conversation',
    ...state,
    // Absent until the first visitor message, which sets it with `if_not_exists` (see `appendWrite`).
    ...(firstVisitorMessageAt === null ? {} : { firstVisitorMessageAt }),
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

/**
 * Fields a message post moves without reading them first and without `rev` (counts by ADD, the
 * last message forward only, the first-response fields once): appends commute, so concurrent posts
 * never race each other. A state write that changes one of them (or a listing key derived from the
 * last message's time) must also be sure no post came in between: it is conditioned on
 * `messageCount`, which every post's transaction moves, and on `lastMessageAt`, which its second
 * step moves.
 */
const APPEND_FIELDS: ReadonlySet<string> = new Set([
  'messageCount',
  'unreadCount',
  'hasUnreadMessages',
  'lastMessage',
  'lastMessageAt',
  'firstVisitorMessageAt',
  'firstResponseTimeMs',
  'gsi2sk',
  'gsi3sk',
]);

const sameValue = (a: unknown, b: unknown) =>
  a === b || (typeof a === 'object' && a !== null && JSON.stringify(a) === JSON.stringify(b));

/**
 * A state change of the conversation (anything but a message post) as one Update: only the
 * attributes that differ are written, on the `rev` that was read (and on `messageCount` and
 * `lastMessageAt` when it sets an append-moved field), so the counts and last message that posts
 * moved meanwhile are never overwritten with what this writer read.
 */
export function conversationStateWrite(current: StoredConversation, next: StoredConversation): Write {
  const before: Record<string, unknown> = conversationItem(current);
  const after: Record<string, unknown> = conversationItem({ ...next, rev: current.rev + 1 });
  const set = Object.entries(after).filter(
    ([name, value]) => value !== undefined && !sameValue(before[name], value),
  );
  const remove = Object.keys(before).filter(
    (name) => before[name] !== undefined && after[name] === undefined,
  );
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':rev': current.rev };
  const clauses = set.map(([name, value], i) => {
    names[`#s${i}`] = name;
    values[`:s${i}`] = value;
    return `#s${i} = :s${i}`;
  });
  const removed = remove.map((name, i) => {
    names[`#r${i}`] = name;
    return `#r${i}`;
  });
  let condition = 'rev = :rev';
  // Removing a listing key (a deletion) holds whatever the posts moved meanwhile: only a value
  // written from what was read must be sure no post came in between.
  if (set.some(([name]) => APPEND_FIELDS.has(name))) {
    condition += ' AND messageCount = :messageCount AND lastMessageAt = :lastMessageAt';
    values[':messageCount'] = current.messageCount;
    values[':lastMessageAt'] = current.lastMessageAt;
  }
  return {
    action: {
      Update: {
        TableName: tableName,
        Key: keys.conversation(current.organizationId, current.id),
        UpdateExpression: `SET ${clauses.join(', ')}${removed.length ? ` REMOVE ${removed.join(', ')}` : ''}`,
        ConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    },
  };
}

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

const NULL_OR_ABSENT = (name: string) => `(attribute_not_exists(${name}) OR ${name} = :null)`;
const LIVE = `attribute_exists(pk) AND ${NULL_OR_ABSENT('deletedAt')}`;

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
  } else condition += ` AND ${NULL_OR_ABSENT('operatorId')}`;
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
  let condition = LIVE;
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
        condition += ` AND ${NULL_OR_ABSENT('firstVisitorMessageAt')}`;
      } else set.push('firstVisitorMessageAt = if_not_exists(firstVisitorMessageAt, :at)');
    }
  }
  const claim = firstResponseClaimOf(current, message);
  if (claim) {
    set.push(`${CLAIM} = if_not_exists(${CLAIM}, :claim)`);
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
          ConditionExpression: `${LIVE} AND ${condition}`,
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

/**
 * The first response is claimed inside the post's own transaction, by `if_not_exists` on an
 * internal attribute: the first candidate to commit wins, and no candidate is ever cancelled or
 * has to try a transaction it then loses. The winner then records `firstResponseTimeMs` and the day
 * counters (`recordFirstResponse`). The claim carries what that step needs, so any later post can
 * finish the step if its winner crashed before it.
 */
const CLAIM = 'firstResponseClaim';

interface FirstResponseClaim {
  messageId: string;
  createdAt: string;
  timeMs: number;
}

/** The claim a message makes when it would be the first response of `current`, or undefined. */
function firstResponseClaimOf(current: StoredConversation, message: Message): FirstResponseClaim | undefined {
  if (message.senderType !== 'operator' || current.firstResponseTimeMs !== null) return undefined;
  const timeMs = withMessage(current, message).firstResponseTimeMs;
  return timeMs === null ? undefined : { messageId: message.id, createdAt: message.createdAt, timeMs };
}

/** How long a claim may wait for its winner before another post finishes recording it. */
const ABANDONED_CLAIM_MS = 60_000;

/**
 * After the post commits, with the item as it stood afterwards: when a first response is claimed
 * and not yet recorded, and the claim is this message's (or an abandoned one), its time and the day
 * counters of first responses go in one transaction, conditioned on the claim and on nothing being
 * recorded yet, so it counts exactly once however many posts try.
 */
async function recordFirstResponse(item: Record<string, unknown>, message: Message): Promise<void> {
  const claim = item[CLAIM] as FirstResponseClaim | undefined;
  if (!claim || (item.firstResponseTimeMs ?? null) !== null || item.deletedAt) return;
  const abandoned = Date.parse(message.createdAt) - Date.parse(claim.createdAt) > ABANDONED_CLAIM_MS;
  if (claim.messageId !== message.id && !abandoned) return;
  const conversation = storedConversationOf(item);
  try {
    await retryOnConflict(() =>
      transact([
        {
          action: {
            Update: {
              TableName: tableName,
              Key: keys.conversation(conversation.organizationId, conversation.id),
              UpdateExpression: 'SET firstResponseTimeMs = :frt',
              ConditionExpression: `${LIVE} AND ${NULL_OR_ABSENT('firstResponseTimeMs')} AND #claim.messageId = :claimed`,
              ExpressionAttributeNames: { '#claim': CLAIM },
              ExpressionAttributeValues: { ':frt': claim.timeMs, ':claimed': claim.messageId, ':null': null },
            },
          },
          onConditionFailed: () => new FirstResponseTaken(),
        },
        ...incrementWrites(stats.firstResponse(conversation, claim, claim.timeMs)),
      ]),
    );
  } catch (error) {
    if (!(error instanceof FirstResponseTaken)) throw error;
  }
}

class FirstResponseTaken extends Error {}

/** `item` holds another message's first-response claim that is not abandoned by the time of `message`. */
function claimedByAnother(item: Record<string, unknown>, message: Message): boolean {
  const claim = item[CLAIM] as FirstResponseClaim | undefined;
  return (
    claim !== undefined &&
    claim.messageId !== message.id &&
    Date.parse(message.createdAt) - Date.parse(claim.createdAt) <= ABANDONED_CLAIM_MS
  );
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

/** A message to append, built from the state read, with further actions of its transaction. */
export interface AppendChange<T> {
  message: Message;
  /** Checks that ride in the same transaction (the reply-to message, the operators named). */
  writes?: Write[];
  result: T;
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

/** The stored item of a live conversation, strongly consistent; undefined when missing or soft-deleted. */
async function liveItem(orgId: string, conversationId: string): Promise<Record<string, unknown> | undefined> {
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
async function mustBeLive(orgId: string, conversationId: string): Promise<Record<string, unknown>> {
  const item = await liveItem(orgId, conversationId);
  if (!item) throw new NotFoundError('Conversation not found');
  return item;
}

/** A strongly consistent read of a live conversation (404 when missing or soft-deleted). */
async function liveConversation(orgId: string, conversationId: string): Promise<StoredConversation> {
  return storedConversationOf(await mustBeLive(orgId, conversationId));
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
      eventWrite(orgId, 'conversation.created', api),
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
    const item = await liveItem(orgId, conversationId);
    return item && storedConversationOf(item);
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
      const current =
        (attempt === 1 ? options.initial : undefined) ?? (await liveConversation(orgId, conversationId));
      options.check?.(current);
      if (options.ifMatch !== undefined && options.ifMatch !== current.version) {
        throw new PreconditionFailedError(current.version);
      }
      const { next, writes = [], result } = await change(current);
      if (!next && writes.length === 0) return result;
      const conversationWrite: Write[] = next ? [conversationStateWrite(current, next)] : [];
      // Every writer passes here, so each team's count of open conversations follows every change.
      const teamWrites = next ? teamLoadWrites(orgId, [{ before: current, after: next }]) : [];
      try {
        await transact([...conversationWrite, ...writes, ...teamWrites], { budget });
        return result;
      } catch (error) {
        if (!(error instanceof ConcurrentChangeError) || !(await budget.pause(attempt))) throw error;
      }
    }
  },

  /**
   * A message post: read, then one transaction of the message, its `message.created` event, the
   * conversation's append Update (counts by ADD, no `rev`: see `appendWrite`) and the day counters.
   * Into a quiet conversation the last message moves in that same Update; into a busy one (see
   * `QUIET_MS`), or when the move lost, it moves after the commit (`moveLastMessage`). For a
   * possible first response its time is then recorded (`recordFirstResponse`). Posts commute, so
   * concurrent posts into one conversation do not make each other retry; only two transactions on
   * the same item at once (AWS cancels one) wait and try again. `version` does not move: a message
   * is not a change an `If-Match` writer must have seen.
   */
  async append<T>(
    orgId: string,
    conversationId: string,
    build: (current: StoredConversation) => AppendChange<T>,
    options: Pick<MutateOptions, 'check'> = {},
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
  },
};

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
