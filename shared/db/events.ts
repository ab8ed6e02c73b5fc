import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { clock } from '../clock';
import { uuidv7 } from '../ids';
import { type DomainEventType, domainEventTypes } from '../schemas/events';
import { domainEventProjection, eventDataProjections } from '../schemas/projections';
import { tableName, ttlSeconds } from './client';
import { keys } from './keys';
import { project, projector } from './project';
import type { Write } from './transaction';

export { domainEventTypes };

/**
 * Kept beyond the contract's 30 days so a client a few days late can still catch up. The analytics
 * export counts part-days from these events, so its horizon for bounds within a day follows this.
 */
export const EVENT_RETENTION_MS = 35 * 24 * 3_600_000;

export type { DomainEventType };

export interface DomainEvent {
  id: string;
  type: DomainEventType;
  timestamp: string;
  organizationId: string;
  data: unknown;
}

const toEnvelope = project<DomainEvent>(domainEventProjection);

/**
 * A stored event as integrators receive it (feed and webhooks alike): the envelope through its
 * projection, then `data` through the projection of its resource, fields in the order of the REST
 * answer.
 */
export function toDomainEvent(item: Record<string, unknown>): DomainEvent {
  const event = toEnvelope(item);
  const projection = eventDataProjections[event.type];
  const data = eventDataOf(item);
  // The envelope named `data`, so it is set in its place.
  event.data = projection ? projector(projection)(data) : data;
  return event;
}

/** The resource a stored event carries, as it was written (no projection). */
export function eventDataOf(item: Record<string, unknown>): unknown {
  return item.dataZ instanceof Uint8Array
    ? JSON.parse(inflateRawSync(item.dataZ).toString('utf8'))
    : item.data;
}

/**
 * A domain event as a table item (the outbox). Writers put it in the same transaction as the change
 * it describes, so neither exists without the other; the table stream carries it onwards.
 */
export function eventItem(orgId: string, type: DomainEventType, data: unknown) {
  return {
    ...eventStamp(orgId, clock.nowMs()),
    entity: 'event',
    type,
    organizationId: orgId,
    // The resource as JSON, deflated: an event is written in the transaction of its change, where
    // every 1 KB write unit counts twice (docs/decisions.md, "Events store their data deflated").
    dataZ: deflateRawSync(JSON.stringify(data)),
  };
}

/**
 * What places an event in time: its id tells the same instant as `timestamp`, on the service clock
 * (as the resource's own times are), so the feed's settled end and the analytics export's part-day
 * reads find events by id. The key comes with the id, as the id picks the event's shard partition.
 */
function eventStamp(orgId: string, nowMs: number) {
  const id = uuidv7(nowMs);
  return {
    ...keys.event(orgId, id),
    id,
    timestamp: new Date(nowMs).toISOString(),
    expiresAt: ttlSeconds(nowMs + EVENT_RETENTION_MS),
  };
}

/**
 * The event item as sent now: a new id (so a new shard and key) and time of this moment, the rest as
 * built. The transaction carrying it stamps it at each send (shared/db/transaction.ts), so an event
 * commits within one send of its id however long its request waited or retried, and the feed never
 * passes it.
 */
function restampedEvent(item: Record<string, unknown>): Record<string, unknown> {
  return { ...item, ...eventStamp(String(item.organizationId), clock.nowMs()) };
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

/**
 * A domain event as an action of the transaction of its change, stamped again at each send of that
 * transaction (`restampedEvent`).
 */
export function eventWrite(orgId: string, type: DomainEventType, data: unknown): Write {
  const Item = eventItem(orgId, type, data);
  return {
    action: { Put: { TableName: tableName, Item } },
    atSend: () => ({ Put: { TableName: tableName, Item: restampedEvent(Item) } }),
  };
}

export function realtimeWrite(orgId: string, notice: Parameters<typeof realtimeItem>[1]): Write {
  return { action: { Put: { TableName: tableName, Item: realtimeItem(orgId, notice) } } };
}
