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

/**
 * Events younger than this are not served yet (see `feed`). An event's id is stamped at each send of
 * its transaction (shared/db/transaction.ts), so this covers one send, which a busy local DynamoDB
 * can hold for most of a second; the contract allows an event to appear up to 5 s after its commit.
 */
export const FEED_SETTLE_MS = 2_000;
const MAX_FEED_PAGES = 10;

/**
 * The organization's events, oldest first. Ids are minted when their transaction is sent, before
 * it commits, so two writers in the same instant may commit out of id order; serving only events
 * older than FEED_SETTLE_MS means a cursor never moves past an event that has yet to appear.
 */
export async function feed(
  orgId: string,
  query: { cursor?: string | undefined; limit: number; types?: readonly DomainEventType[] | undefined },
): Promise<{ data: DomainEvent[]; nextCursor: string | null; done: boolean }> {
  const queryId = `events:${[...(query.types ?? [])].sort().join(',')}`;
  const given = query.cursor ? decodeCursor(query.cursor, orgId, queryId) : undefined;
  const settledEnd = keys.eventKeyAt(clock.nowMs() - FEED_SETTLE_MS);
  const partition = keys.eventsPartition(orgId);
  // A tail cursor minted by an instance whose clock runs slightly ahead may sit past this settled
  // end; DynamoDB refuses a start key outside the key condition, and there is nothing to read yet.
  const caughtUp = given !== undefined && String(given.sk) >= settledEnd;
  let startKey = given;
  const values: Record<string, unknown> = {
    ':pk': partition,
    ':from': keys.eventPrefix,
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
  const data: DomainEvent[] = [];
  let lastReturned: Record<string, unknown> | undefined;
  let overflow = false;
  let scanned = 0;
  for (let page = 0; page < MAX_FEED_PAGES && !caughtUp; page++) {
    const result = await db.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :until',
        FilterExpression: filter.join(' AND '),
        ...(types.length ? { ExpressionAttributeNames: { '#type': 'type' } } : {}),
        ExpressionAttributeValues: values,
        Limit: Math.max(50, query.limit * 2),
        ExclusiveStartKey: startKey,
      }),
    );
    scanned += result.ScannedCount ?? 0;
    for (const item of result.Items ?? []) {
      if (data.length === query.limit) {
        overflow = true;
        break;
      }
      data.push(toDomainEvent(item));
      lastReturned = item;
    }
    startKey = result.LastEvaluatedKey;
    if (overflow || !startKey) break;
  }
  const resumeAt = overflow && lastReturned ? { pk: lastReturned.pk, sk: lastReturned.sk } : startKey;
  if (resumeAt) return { data, nextCursor: encodeCursor(orgId, queryId, resumeAt), done: false };
  // Caught up. The cursor stays for polling: it points at the settled end of the feed (so a poll
  // with a `types` filter does not read again the events it skipped), or stays where it was.
  // Null only when there is no event at all to be after.
  if (caughtUp) return { data, nextCursor: query.cursor ?? null, done: true };
  const seenAny = scanned > 0 || given !== undefined;
  return {
    data,
    nextCursor: seenAny ? encodeCursor(orgId, queryId, { pk: partition, sk: settledEnd }) : null,
    done: true,
  };
}
