import { clock } from '../clock';
import { uuidv7 } from '../ids';
import { tableName, ttlSeconds } from './client';
import { keys } from './keys';
import type { Write } from './transaction';

/** Kept beyond the contract's 30 days so a client a few days late can still catch up. */
const RETENTION_MS = 35 * 24 * 3_600_000;

export type DomainEventType =
  | 'conversation.created'
  | 'conversation.updated'
  | 'conversation.snoozed'
  | 'conversation.closed'
  | 'conversation.deleted'
  | 'conversation.assigned'
  | 'message.created'
  | 'message.updated'
  | 'note.created'
  | 'note.deleted';

export interface DomainEvent {
  id: string;
  type: DomainEventType;
  timestamp: string;
  organizationId: string;
  data: unknown;
}

/**
 * A domain event as a table item (the outbox). Writers put it in the same transaction as the change
 * it describes, so neither exists without the other; the table stream carries it onwards.
 */
export function eventItem(orgId: string, type: DomainEventType, data: unknown) {
  const event: DomainEvent = { id: uuidv7(), type, timestamp: clock.nowIso(), organizationId: orgId, data };
  return {
    ...keys.event(orgId, event.id),
    entity: 'event',
    ...event,
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
