import { createHash } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import { deliveryProjection } from '../schemas/projections';
import type { Delivery } from '../schemas/webhook';
import { batchPut } from './batch';
import { db, tableName, ttlSeconds } from './client';
import { conditionHeld, isConditionFailure } from './errors';
import { keys } from './keys';
import { project } from './project';
import { childrenQuery, offsetPage } from './query';

export type { Delivery };

/** Deliveries live as long as the events they carry. */
const RETENTION_MS = 35 * 24 * 3_600_000;

export interface StoredDelivery extends Delivery {
  orgId: string;
  /**
   * The exact body sent on every attempt: retries repeat it byte for byte. Not kept once the
   * delivery succeeded (nothing sends it again): '' when read back then.
   */
  payload: string;
}

/** The delivery as the API shows it (the schema's fields, by a projection without zod). */
export const toDelivery = project<Delivery>(deliveryProjection);

function storedOf(item: Record<string, unknown>): StoredDelivery {
  return {
    ...toDelivery(item),
    orgId: String(item.orgId),
    payload: typeof item.payload === 'string' ? item.payload : '',
  };
}

/**
 * The delivery of an event to a webhook has one id, whoever computes it: a UUIDv7 with the event's
 * milliseconds and bits of SHA-256(webhook, event). A stream batch delivered twice therefore
 * creates no second delivery.
 */
export function deliveryIdFor(webhookId: string, eventId: string): string {
  const digest = createHash('sha256').update(`${webhookId}:${eventId}`).digest();
  const bytes = Buffer.alloc(16);
  Buffer.from(eventId.replaceAll('-', '').slice(0, 12), 'hex').copy(bytes, 0);
  digest.copy(bytes, 6, 0, 10);
  bytes[6] = 0x70 | ((bytes[6] ?? 0) & 0x0f);
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * A delivery before its first attempt. The fan-out queues it inside the job and the delivery worker
 * rebuilds it from that job, so the two must agree on it field for field.
 */
export function pendingDelivery(
  fields: Pick<StoredDelivery, 'id' | 'orgId' | 'webhookId' | 'eventId' | 'event' | 'createdAt' | 'payload'>,
): StoredDelivery {
  return {
    ...fields,
    status: 'pending',
    attempts: 0,
    responseStatus: null,
    error: null,
    lastAttemptAt: null,
    nextAttemptAt: fields.createdAt,
  };
}

function deliveryItem(delivery: StoredDelivery): Record<string, unknown> {
  return {
    ...keys.delivery(delivery.orgId, delivery.webhookId, delivery.id),
    entity: 'delivery',
    ...delivery,
    expiresAt: ttlSeconds(clock.nowMs() + RETENTION_MS),
  };
}

export const deliveries = {
  /** Creates the delivery unless it exists; true when this call created it. */
  async create(delivery: StoredDelivery): Promise<boolean> {
    return conditionHeld(() =>
      db.send(
        new PutCommand({
          TableName: tableName,
          Item: deliveryItem(delivery),
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
  },

  /**
   * Writes deliveries whose first attempt just succeeded, 25 per BatchWriteItem. Only a first
   * attempt writes its record this way and a success is final, so there is nothing to condition
   * on; a duplicate SQS message writes the same outcome again.
   */
  async recordFirstSuccesses(settled: readonly StoredDelivery[]): Promise<void> {
    // Succeeded: the payload, read only to retry, is dropped (fewer bytes written and kept).
    await batchPut(settled.map((delivery) => ({ ...deliveryItem(delivery), payload: undefined })));
  },

  async get(orgId: string, webhookId: string, deliveryId: string): Promise<StoredDelivery | undefined> {
    const { Item } = await db.send(
      new GetCommand({
        TableName: tableName,
        Key: keys.delivery(orgId, webhookId, deliveryId),
        ConsistentRead: true,
      }),
    );
    return Item ? storedOf(Item) : undefined;
  },

  /** Newest first, an offset page, with the total (see `offsetPage`); expired ones TTL has yet to remove are left out. */
  async list(orgId: string, webhookId: string, offset: number, limit: number) {
    const { items, total } = await offsetPage(
      {
        ...childrenQuery(keys.deliveriesPartition(orgId, webhookId), keys.deliveryPrefix, {
          ':now': ttlSeconds(clock.nowMs()),
        }),
        FilterExpression: 'expiresAt > :now',
        ScanIndexForward: false,
      },
      offset,
      limit,
    );
    return { data: items.map(toDelivery), totalItems: total };
  },

  /**
   * Records an attempt only if no other attempt was recorded since it started (a duplicate SQS
   * message does not count twice). False when another attempt got there first.
   */
  async recordAttempt(
    current: StoredDelivery,
    outcome: Pick<Delivery, 'status' | 'responseStatus' | 'error' | 'lastAttemptAt' | 'nextAttemptAt'>,
  ): Promise<boolean> {
    return conditionHeld(() =>
      db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.delivery(current.orgId, current.webhookId, current.id),
          UpdateExpression: `SET #status = :status, attempts = :attempts, responseStatus = :responseStatus, #error = :error, lastAttemptAt = :lastAttemptAt, nextAttemptAt = :nextAttemptAt${outcome.status === 'succeeded' ? ' REMOVE payload' : ''}`,
          ConditionExpression: 'attempts = :seen',
          ExpressionAttributeNames: { '#status': 'status', '#error': 'error' },
          ExpressionAttributeValues: {
            ':status': outcome.status,
            ':attempts': current.attempts + 1,
            ':responseStatus': outcome.responseStatus,
            ':error': outcome.error,
            ':lastAttemptAt': outcome.lastAttemptAt,
            ':nextAttemptAt': outcome.nextAttemptAt,
            ':seen': current.attempts,
          },
        }),
      ),
    );
  },

  /** A failed delivery goes back to pending for one more attempt; the reason when it cannot. */
  async reopen(
    orgId: string,
    webhookId: string,
    deliveryId: string,
  ): Promise<'reopened' | 'missing' | 'not_failed'> {
    try {
      await db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.delivery(orgId, webhookId, deliveryId),
          UpdateExpression: 'SET #status = :pending, nextAttemptAt = :now',
          ConditionExpression: '#status = :failed',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':pending': 'pending', ':failed': 'failed', ':now': clock.nowIso() },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return 'reopened';
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return (error as { Item?: unknown }).Item ? 'not_failed' : 'missing';
    }
  },
};
