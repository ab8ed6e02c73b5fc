/**
 * The events feed (`GET /api/events`), apart from the event items every change writes
 * (events.ts): its cursor needs the key ring, read from Secrets Manager at init
 * (shared/cursor-keys.ts), which only the function serving the feed should load and read.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import { db, tableName, ttlSeconds } from './client';
import { decodeCursor, encodeCursor } from './cursor';
import { type DomainEvent, type DomainEventType, toDomainEvent } from './events';
import { keys } from './keys';
import { EVENT_SHARDS } from './shards';

/**
 * Events younger than this are not served yet (see `feed`). An event's id is stamped at each send of
 * its transaction (shared/db/transaction.ts), so this covers one send, which a busy local DynamoDB
 * can hold for most of a second; the contract allows an event to appear up to 5 s after its commit.
 */
export const FEED_SETTLE_MS = 2_000;
/** Rounds of Queries (each to the shards that need one, together) a page may take when filtered. */
const MAX_FEED_ROUNDS = 10;

/** One shard partition as the merge reads it. */
interface ShardRead {
  pk: string;
  /** Items read and kept by the filter, not served yet, in sort key order. */
  pending: Record<string, unknown>[];
  /** The last sort key the shard's Queries evaluated: everything up to it is read. */
  readTo: string | undefined;
  startKey: Record<string, unknown> | undefined;
  exhausted: boolean;
}

/**
 * The organization's events, oldest first. Ids are minted when their transaction is sent, before
 * it commits, so two writers in the same instant may commit out of id order; serving only events
 * older than FEED_SETTLE_MS means a cursor never moves past an event that has yet to appear.
 *
 * The events lie in EVENT_SHARDS partitions (keys.event), merged here by sort key: below the settled
 * end every shard is complete, so the merge is the organization's exact id order. The cursor holds
 * the last sort key a page covered (`after`), and the next page reads every shard past it.
 */
export async function feed(
  orgId: string,
  query: { cursor?: string | undefined; limit: number; types?: readonly DomainEventType[] | undefined },
): Promise<{ data: DomainEvent[]; nextCursor: string | null; done: boolean }> {
  const queryId = `events:${[...(query.types ?? [])].sort().join(',')}`;
  const after = query.cursor ? afterOf(decodeCursor(query.cursor, orgId, queryId)) : undefined;
  const settledEnd = keys.eventKeyAt(clock.nowMs() - FEED_SETTLE_MS);
  // ' ' sorts below every character of a sort key, so `after + ' '` is the first key past `after`.
  const from = after !== undefined ? `${after} ` : keys.eventPrefix;
  // A tail cursor minted by an instance whose clock runs slightly ahead may sit past this settled
  // end; DynamoDB refuses a BETWEEN whose bounds are reversed, and there is nothing to read yet.
  if (from > settledEnd) return { data: [], nextCursor: query.cursor ?? null, done: true };

  const values: Record<string, unknown> = {
    ':from': from,
    ':until': settledEnd,
    ':now': ttlSeconds(clock.nowMs()),
  };
  const types = query.types ?? [];
  types.forEach((type, i) => {
    values[`:t${i}`] = type;
  });
  const filter = [
    'expiresAt > :now',
    ...(types.length ? [`#type IN (${types.map((_, i) => `:t${i}`).join(', ')})`] : []),
  ];
  // The single partition's read budget, shared: ids hash evenly, so each shard holds about a
  // quarter of the next page, and one that runs short is read again alone.
  const shardLimit = Math.ceil(Math.max(50, query.limit * 2) / EVENT_SHARDS);
  let scanned = 0;
  const readPage = async (shard: ShardRead): Promise<void> => {
    const result = await db.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :until',
        FilterExpression: filter.join(' AND '),
        ...(types.length ? { ExpressionAttributeNames: { '#type': 'type' } } : {}),
        ExpressionAttributeValues: { ...values, ':pk': shard.pk },
        Limit: shardLimit,
        ExclusiveStartKey: shard.startKey,
      }),
    );
    scanned += result.ScannedCount ?? 0;
    shard.pending.push(...(result.Items ?? []));
    shard.startKey = result.LastEvaluatedKey;
    shard.exhausted = result.LastEvaluatedKey === undefined;
    if (result.LastEvaluatedKey) shard.readTo = String(result.LastEvaluatedKey.sk);
  };

  const shards: ShardRead[] = keys
    .eventsPartitions(orgId)
    .map((pk) => ({ pk, pending: [], readTo: undefined, startKey: undefined, exhausted: false }));
  const data: DomainEvent[] = [];
  let lastServed: string | undefined;
  let rounds = 0;
  // Where the page ends when a filter leaves the rounds short of a full page: everything up to it
  // has been read in every shard, so the next page starts there without reading it again.
  let readThrough: string | undefined;
  while (data.length < query.limit) {
    const next = nextPending(shards);
    const nextSk = next ? String(next.pending[0]?.sk) : undefined;
    // A shard read only up to below the next candidate may still hold an earlier event.
    const behind = shards.filter(
      (shard) =>
        !shard.exhausted &&
        shard.pending.length === 0 &&
        (nextSk === undefined || shard.readTo === undefined || shard.readTo < nextSk),
    );
    if (behind.length) {
      if (rounds === MAX_FEED_ROUNDS) {
        readThrough = behind.map((shard) => shard.readTo ?? '').reduce((a, b) => (a < b ? a : b));
        break;
      }
      rounds += 1;
      await Promise.all(behind.map(readPage));
      continue;
    }
    const item = next?.pending.shift();
    if (!item) break;
    data.push(toDomainEvent(item));
    lastServed = String(item.sk);
  }

  const caughtUp = shards.every((shard) => shard.exhausted && shard.pending.length === 0);
  if (!caughtUp) {
    // A shard left behind at the last round has still read past the last event served.
    const position = readThrough || lastServed || after;
    if (position !== undefined)
      return { data, nextCursor: encodeCursor(orgId, queryId, { after: position }), done: false };
  }
  // Caught up. The cursor stays for polling: it points at the settled end of the feed (so a poll
  // with a `types` filter does not read again the events it skipped). Null only when there is no
  // event at all to be after.
  const seenAny = scanned > 0 || after !== undefined;
  return {
    data,
    nextCursor: seenAny ? encodeCursor(orgId, queryId, { after: settledEnd }) : null,
    done: true,
  };
}

/** The shard whose next pending event comes first, if any shard has one. */
function nextPending(shards: readonly ShardRead[]): ShardRead | undefined {
  let first: ShardRead | undefined;
  for (const shard of shards) {
    const head = shard.pending[0];
    if (head && (!first || String(head.sk) < String(first.pending[0]?.sk))) first = shard;
  }
  return first;
}

/**
 * The last sort key a cursor covered. Cursors minted before the events were sharded hold the
 * DynamoDB start key of the single partition (`{ pk, sk }`), whose `sk` means the same.
 */
function afterOf(position: Record<string, unknown>): string | undefined {
  const after = position.after ?? position.sk;
  return typeof after === 'string' ? after : undefined;
}
