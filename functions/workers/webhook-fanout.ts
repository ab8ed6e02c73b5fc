import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { db, tableName } from '../../shared/db/client';
import { deliveryIdFor, type StoredDelivery } from '../../shared/db/deliveries';
import type { DomainEvent } from '../../shared/db/events';
import { type StoredWebhook, webhooks } from '../../shared/db/webhooks';
import { log } from '../../shared/logger';
import { startDelivery } from '../../shared/webhooks/dispatch';

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
export const handler = async (
  event: DynamoDBStreamEvent,
  context: Context,
): Promise<DynamoDBBatchResponse> => {
  log.beginRequest(context.awsRequestId);
  const subscribers = new Map<string, Promise<StoredWebhook[]>>();
  for (const record of event.Records) {
    const image = record.dynamodb?.NewImage;
    if (record.eventName !== 'INSERT' || image?.entity?.S !== 'event') continue;
    try {
      const stored = await eventOf(record.dynamodb?.Keys?.pk?.S, record.dynamodb?.Keys?.sk?.S);
      if (!stored) continue;
      const payload = JSON.stringify({
        id: stored.id,
        type: stored.type,
        timestamp: stored.timestamp,
        organizationId: stored.organizationId,
        data: stored.data,
      });
      // One strongly consistent read of the organization's webhooks per batch: a webhook created a
      // moment ago already receives the next event.
      let orgWebhooks = subscribers.get(stored.organizationId);
      if (!orgWebhooks) {
        orgWebhooks = webhooks.all(stored.organizationId, { consistent: true });
        subscribers.set(stored.organizationId, orgWebhooks);
      }
      const targets = (await orgWebhooks).filter(
        (webhook) => webhook.active && webhook.events.includes(stored.type),
      );
      await Promise.all(
        targets.map((webhook) => {
          const delivery: StoredDelivery = {
            id: deliveryIdFor(webhook.id, stored.id),
            orgId: stored.organizationId,
            webhookId: webhook.id,
            eventId: stored.id,
            event: stored.type,
            status: 'pending',
            attempts: 0,
            responseStatus: null,
            error: null,
            createdAt: stored.timestamp,
            lastAttemptAt: null,
            nextAttemptAt: stored.timestamp,
            payload,
          };
          return startDelivery(delivery);
        }),
      );
    } catch (error) {
      log.error('webhook fan-out failed', { error: error as Error, eventId: record.eventID });
      return { batchItemFailures: [{ itemIdentifier: record.dynamodb?.SequenceNumber ?? '' }] };
    }
  }
  return { batchItemFailures: [] };
};
