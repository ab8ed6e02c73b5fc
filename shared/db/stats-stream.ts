import type { DynamoDBRecord } from 'aws-lambda';
import { dayOf } from '../analytics/days';
import type { ActiveSurvey, StoredConversation } from '../conversations/state';
import { logger } from '../logger';
import { batchGet } from './batch';
import { tableName, ttlSeconds } from './client';
import { storedConversationOf } from './conversation-item';
import { type Increment, incrementWrites } from './increments';
import { keys } from './keys';
import { stats } from './stats';
import { imageOf } from './stream-image';
import { RetryBudget, transactUnlessConditionFails, type Write } from './transaction';
import { usageIncrementsOf } from './usage-stream';

/**
 * The daily aggregates, counted from the table's stream rather than in the transaction of each
 * write: a day counter every create, post, close and survey of a tenant wrote made a few items the
 * lane all of them queued on (docs/data-model.md, "Hot partitions and limits"). What a change
 * counts is read from the images the stream carries (a conversation before and after, a new
 * message), and each record is counted exactly once although the stream delivers at least once:
 * its `counted` marker commits in the same transaction as its increments, and a record delivered
 * again finds its marker and adds nothing.
 */

type Item = Record<string, unknown>;

/** A stream record is kept 24 hours: a marker kept twice that long outlives every redelivery. */
const MARKER_TTL_MS = 48 * 3_600_000;

/**
 * Off the request path a batch may wait for its counters' items far longer than a request could:
 * a batch that still cannot commit is reported and delivered again, and counts then.
 */
const COUNT_BUDGET_MS = 20_000;

/** What one stream record adds to the daily aggregates (nothing for most records). */
export function incrementsOf(record: DynamoDBRecord): Increment[] {
  const before = imageOf(record.dynamodb?.OldImage);
  const after = imageOf(record.dynamodb?.NewImage);
  const entity = (after ?? before)?.entity;
  if (entity === 'message') return record.eventName === 'INSERT' && after ? messageIncrements(after) : [];
  if (entity === 'conversation' && after)
    return conversationIncrements(before && storedConversationOf(before), storedConversationOf(after));
  // A purge's REMOVE: the deletion before it already took the survey response out of the counters.
  return [];
}

function messageIncrements(message: Item): Increment[] {
  const { orgId, conversationId, senderType, createdAt } = message;
  if (typeof orgId !== 'string' || typeof conversationId !== 'string' || typeof createdAt !== 'string')
    return [];
  if (senderType !== 'visitor' && senderType !== 'operator') return [];
  return stats.messagesCounted(orgId, dayOf(createdAt), conversationId, senderType);
}

/** A conversation's change (`before` undefined: its creation), as the aggregates see it. */
function conversationIncrements(
  before: StoredConversation | undefined,
  after: StoredConversation,
): Increment[] {
  // Every conversation item carries its times; an image without them is none the counters know.
  if (typeof after.updatedAt !== 'string') return [];
  const increments: Increment[] = [];
  if (!before) {
    if (typeof after.createdAt === 'string') increments.push(...stats.conversationStarted(after));
  } else if (after.status === 'closed' && before.status !== 'closed' && !after.deletedAt)
    increments.push(...stats.conversationClosed(after));
  const responseMs = after.firstResponseTimeMs;
  if (typeof (before?.firstResponseTimeMs ?? null) !== 'number' && typeof responseMs === 'number')
    increments.push(...stats.firstResponse(after, respondedAt(after), responseMs));
  increments.push(...surveyIncrements(before, after));
  return increments;
}

/** When the first response was given: its time after the first visitor message. */
function respondedAt(conversation: StoredConversation): string {
  const start = conversation.firstVisitorMessageAt;
  if (start === null || conversation.firstResponseTimeMs === null) return conversation.updatedAt;
  return new Date(Date.parse(start) + conversation.firstResponseTimeMs).toISOString();
}

/** The response that counts in CSAT: none once the conversation is deleted. */
const countedSurvey = (conversation: StoredConversation | undefined): ActiveSurvey | null =>
  !conversation || conversation.deletedAt ? null : conversation.activeSurvey;

/** The response that stopped counting comes off, the one that started goes on. */
function surveyIncrements(before: StoredConversation | undefined, after: StoredConversation): Increment[] {
  const was = countedSurvey(before);
  const is = countedSurvey(after);
  if (was === is || (was && is && was.surveyId === is.surveyId)) return [];
  return [
    ...(was ? stats.surveyCounted(after.organizationId, after.id, was, -1) : []),
    ...(is ? stats.surveyCounted(after.organizationId, after.id, is, 1) : []),
  ];
}

/** The organization whose counters a record's increments move (every key carries it). */
const organizationOf = (increments: readonly Increment[]): string | undefined =>
  /^ORG#([^#]+)#/.exec(increments[0]?.key.pk ?? '')?.[1];

/**
 * What a record adds to the daily aggregates of the analytics endpoints and to the organization's
 * usage: one counting, so one marker per record serves both (counted twice over, a message would
 * pay two markers: 2 WCU more a record).
 */
const countedIncrementsOf = (record: DynamoDBRecord): Increment[] => [
  ...incrementsOf(record),
  ...usageIncrementsOf(record),
];

/** The marker that says the record `eventId` of the stream was counted. */
function markerWrite(orgId: string, eventId: string, nowMs: number): Write {
  return {
    action: {
      Put: {
        TableName: tableName,
        Item: {
          ...keys.countedRecord(orgId, eventId),
          entity: 'counted',
          expiresAt: ttlSeconds(nowMs + MARKER_TTL_MS),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  };
}

interface Countable {
  eventId: string;
  orgId: string;
  increments: Increment[];
}

/** A transaction holds at most 100 actions: markers, and the counters they move summed per item. */
const MAX_ACTIONS = 100;

/** Records in chunks whose markers and summed counters fit one transaction each. */
function chunksOf(countables: readonly Countable[]): Countable[][] {
  const chunks: Countable[][] = [];
  let chunk: Countable[] = [];
  for (const countable of countables) {
    const next = [...chunk, countable];
    if (chunk.length && actionsOf(next, Date.now()).length > MAX_ACTIONS) {
      chunks.push(chunk);
      chunk = [countable];
    } else chunk = next;
  }
  if (chunk.length) chunks.push(chunk);
  return chunks;
}

function actionsOf(chunk: readonly Countable[], nowMs: number): Write[] {
  return [
    ...chunk.map((countable) => markerWrite(countable.orgId, countable.eventId, nowMs)),
    ...incrementWrites(chunk.flatMap((countable) => countable.increments)),
  ];
}

/**
 * Counts what `records` add to the daily aggregates and the usage, each record once. Returns the
 * event ids of the records that could not be counted in time (their chunk's items stayed busy or
 * throttled past the budget): the caller reports them, and the stream delivers them again.
 */
export async function countRecords(records: readonly DynamoDBRecord[]): Promise<Set<string>> {
  const countables: Countable[] = [];
  for (const record of records) {
    // A value that is no number (an image missing what the counters read) would fail the chunk's
    // transaction on every delivery: it is left out, and the rest of the record counts.
    const increments = countedIncrementsOf(record).filter((increment) =>
      Object.values(increment.add).every(Number.isFinite),
    );
    const orgId = organizationOf(increments);
    if (increments.length && orgId && record.eventID)
      countables.push({ eventId: record.eventID, orgId, increments });
  }
  const uncounted = new Set<string>();
  const chunks = chunksOf(await notYetCounted(countables));
  const outcomes = await Promise.allSettled(chunks.map(countChunk));
  outcomes.forEach((outcome, index) => {
    if (outcome.status === 'fulfilled') return;
    logger.warn(
      'daily aggregates and usage: a chunk of stream records was not counted, reported for redelivery',
      {
        error: outcome.reason as Error,
        records: chunks[index]?.length,
      },
    );
    for (const countable of chunks[index] ?? []) uncounted.add(countable.eventId);
  });
  return uncounted;
}

/**
 * The records whose marker is not there yet: a batch delivered again (after a failure reported in
 * it) skips what it counted before with one read, rather than meeting each marker in turn.
 */
async function notYetCounted(countables: readonly Countable[]): Promise<Countable[]> {
  if (countables.length === 0) return [];
  const markerOf = (countable: Countable) => keys.countedRecord(countable.orgId, countable.eventId);
  const found = await batchGet(countables.map(markerOf), { consistent: true, projection: ['sk'] });
  const counted = new Set(found.map((item) => String(item.sk)));
  return countables.filter((countable) => !counted.has(markerOf(countable).sk));
}

/** One chunk in one transaction; a record whose marker is there already was counted, and leaves it. */
async function countChunk(chunk: Countable[]): Promise<void> {
  const budget = new RetryBudget(COUNT_BUDGET_MS);
  let pending = chunk;
  while (pending.length) {
    const failed = await transactUnlessConditionFails(actionsOf(pending, Date.now()), { budget });
    if (failed === undefined) return;
    if (failed >= pending.length)
      throw new Error('A counter update of the daily aggregates or the usage failed its condition');
    pending = pending.filter((_, index) => index !== failed);
  }
}
