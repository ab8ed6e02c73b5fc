import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import { uuidv7 } from '../ids';
import { eventDataSchemas } from '../schemas/event-data';
import { type DomainEventType, domainEventTypes } from '../schemas/events';
import { db, tableName, ttlSeconds } from './client';
import { decodeCursor, encodeCursor } from './cursor';
import { keys } from './keys';
import { projectorOf } from './project';
import type { Write } from './transaction';

export { domainEventTypes };

/** Kept beyond the contract's 30 days so a client a few days late can still catch up. */
const RETENTION_MS = 35 * 24 * 3_600_000;

export type { DomainEventType };

export interface DomainEvent {
  id: string;
  type: DomainEventType;
  timestamp: string;
  organizationId: string;
  data: unknown;
}

/**
 * A stored event as integrators receive it (feed and webhooks alike): `data` through the response
 * schema of its resource, fields in the order of the REST answer.
 */
export function toDomainEvent(item: Record<string, unknown>): DomainEvent {
  const type = item.type as DomainEventType;
  const schema = eventDataSchemas[type];
  const data =
    item.dataZ instanceof Uint8Array ? JSON.parse(inflateRawSync(item.dataZ).toString('utf8')) : item.data;
  return {
    id: String(item.id),
    type,
    timestamp: String(item.timestamp),
    organizationId: String(item.organizationId),
    data: schema ? projectorOf(schema)(data) : data,
  };
}

/**
 * A domain event as a table item (the outbox). Writers put it in the same transaction as the change
 * it describes, so neither exists without the other; the table stream carries it onwards.
 */
export function eventItem(orgId: string, type: DomainEventType, data: unknown) {
  const id = uuidv7();
  return {
    ...keys.event(orgId, id),
    entity: 'event',
    id,
    type,
    timestamp: clock.nowIso(),
    organizationId: orgId,
    // The resource as JSON, deflated: a conversation (~1.7 KB) shrinks under the 1 KB of one write
    // unit, and an event is written in the transaction of its change, where every unit counts twice.
    dataZ: deflateRawSync(JSON.stringify(data)),
    expiresAt: ttlSeconds(clock.nowMs() + RETENTION_MS),
  };
}

export type RealtimeType = 'message_edited' | 'note_invalidated' | 'conversation_snoozed';

/**
 * A realtime notice for connected clients, written in the same transaction as its change. `audience`
 * says who may receive it: `operators` never reaches visitors (note invalidation), `conversation`
 * reaches the operators and the conversation's own visitor.
 */
export function realtimeItem(
  orgId: string,
  notice: {
    type: RealtimeType;
    audience: 'operators' | 'conversation';
    conversationId: string;
    /** The conversation's visitor, who also receives `conversation` notices. */
    visitorId?: string;
    payload: unknown;
  },
) {
  const id = uuidv7();
  return {
    ...keys.realtime(orgId, id),
    entity: 'realtime',
    id,
    organizationId: orgId,
    timestamp: clock.nowIso(),
    ...notice,
    expiresAt: ttlSeconds(clock.nowMs() + 24 * 3_600_000),
  };
}

/** A domain event as an action of the transaction of its change. */
export function eventWrite(orgId: string, type: DomainEventType, data: unknown): Write {
  return { action: { Put: { TableName: tableName, Item: eventItem(orgId, type, data) } } };
}

export function realtimeWrite(orgId: string, notice: Parameters<typeof realtimeItem>[1]): Write {
  return { action: { Put: { TableName: tableName, Item: realtimeItem(orgId, notice) } } };
}

/** Events younger than this are not served yet: see `feed`. */
export const FEED_SETTLE_MS = 1_000;
const MAX_FEED_PAGES = 10;

/** The sort key just above every event id minted before `ms` (UUIDv7 ids start with their time). */
function eventKeyBefore(ms: number): string {
  const hex = ms.toString(16).padStart(12, '0');
  return `${keys.eventPrefix}${hex.slice(0, 8)}-${hex.slice(8, 12)}`;
}

/**
 * The organization's events, oldest first. Ids are minted before their transaction commits, so
 * two writers in the same instant may commit out of id order; serving only events older than
 * FEED_SETTLE_MS means a cursor never moves past an event that has yet to appear.
 */
export async function feed(
  orgId: string,
  query: { cursor?: string | undefined; limit: number; types?: readonly DomainEventType[] | undefined },
): Promise<{ data: DomainEvent[]; nextCursor: string | null; done: boolean }> {
  const queryId = `events:${[...(query.types ?? [])].sort().join(',')}`;
  const given = query.cursor ? decodeCursor(query.cursor, orgId, queryId) : undefined;
  const settledEnd = eventKeyBefore(clock.nowMs() - FEED_SETTLE_MS);
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
