import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { db, tableName } from '../../shared/db/client';
import { deliveryIdFor } from '../../shared/db/deliveries';
import type { DomainEvent } from '../../shared/db/events';
import { type StoredWebhook, webhooks } from '../../shared/db/webhooks';
import { log } from '../../shared/logger';
import { startDeliveries } from '../../shared/webhooks/dispatch';

/**
 * The event as stored, read by the key the stream names. Reading it (rather than decoding the
 * stream image) keeps one decoding path for AWS and the local emulator, whose stream client renders
 * empty maps ambiguously.
 */
async function eventOf(pk: string | undefined, sk: string | undefined): Promise<DomainEvent | undefined> {
  if (!pk || !sk) return undefined;
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: { pk, sk }, ConsistentRead: true }),
  );
  return Item as DomainEvent | undefined;
}

/**
 * Stream consumer: every committed domain event becomes one delivery per active webhook of its
 * organization that subscribes to its type. Delivery ids derive from (webhook, event), so a batch
 * delivered twice by the stream creates nothing twice; a record that fails is reported, and the
 * stream delivers it (and what follows) again. Nothing is lost between the change and the queue.
 */
/** Events of a batch fanned out at once; each still waits for its own writes before it counts as done. */
const CONCURRENCY = 10;

export const handler = async (
  event: DynamoDBStreamEvent,
  context: Context,
): Promise<DynamoDBBatchResponse> => {
  log.beginRequest(context.awsRequestId);
  const subscribers = new Map<string, Promise<StoredWebhook[]>>();
  const subscribersOf = (orgId: string) => {
    // One strongly consistent read of the organization's webhooks per batch: a webhook created a
    // moment ago already receives the next event.
    let found = subscribers.get(orgId);
    if (!found) {
      found = webhooks.all(orgId, { consistent: true });
      subscribers.set(orgId, found);
    }
    return found;
  };
  const fanOut = async (pk: string | undefined, sk: string | undefined): Promise<void> => {
    const stored = await eventOf(pk, sk);
    if (!stored) return;
    const payload = JSON.stringify({
      id: stored.id,
      type: stored.type,
      timestamp: stored.timestamp,
      organizationId: stored.organizationId,
      data: stored.data,
    });
    const targets = (await subscribersOf(stored.organizationId)).filter(
      (webhook) => webhook.active && webhook.events.includes(stored.type),
    );
    await startDeliveries(
      targets.map((webhook) => ({
        id: deliveryIdFor(webhook.id, stored.id),
        orgId: stored.organizationId,
        webhookId: webhook.id,
        eventId: stored.id,
        event: stored.type,
        status: 'pending' as const,
        attempts: 0,
        responseStatus: null,
        error: null,
        createdAt: stored.timestamp,
        lastAttemptAt: null,
        nextAttemptAt: stored.timestamp,
        payload,
      })),
    );
  };

  const records = event.Records.filter(
    (record) => record.eventName === 'INSERT' && record.dynamodb?.NewImage?.entity?.S === 'event',
  );
  const failed = new Set<number>();
  for (let start = 0; start < records.length; start += CONCURRENCY) {
    const chunk = records.slice(start, start + CONCURRENCY);
    const outcomes = await Promise.allSettled(
      chunk.map((record) => fanOut(record.dynamodb?.Keys?.pk?.S, record.dynamodb?.Keys?.sk?.S)),
    );
    outcomes.forEach((outcome, i) => {
      if (outcome.status === 'rejected') {
        log.error('webhook fan-out failed', { error: outcome.reason as Error, eventId: chunk[i]?.eventID });
        failed.add(start + i);
      }
    });
    if (failed.size) break;
  }
  // The stream retries from the earliest failure onwards; repeats of later events are harmless.
  const earliest = failed.size ? records[Math.min(...failed)] : undefined;
  return { batchItemFailures: earliest ? [{ itemIdentifier: earliest.dynamodb?.SequenceNumber ?? '' }] : [] };
};
