import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { batchGet } from '../../shared/db/batch';
import { deliveryIdFor, type StoredDelivery } from '../../shared/db/deliveries';
import { type DomainEvent, toDomainEvent } from '../../shared/db/events';
import { allWebhooks, type StoredWebhook } from '../../shared/db/webhooks';
import { discordJobsFor, queueDiscordJobs } from '../../shared/discord/fanout';
import { beginRequest, logger } from '../../shared/logger';
import { captureColdStart } from '../../shared/metrics';
import { queueFirstAttempts } from '../../shared/webhooks/dispatch';

/** The deliveries of one event: one per active webhook of its organization subscribed to its type. */
function deliveriesOf(stored: DomainEvent, subscribers: readonly StoredWebhook[]): StoredDelivery[] {
  const targets = subscribers.filter((webhook) => webhook.active && webhook.events.includes(stored.type));
  if (targets.length === 0) return [];
  const payload = JSON.stringify({
    id: stored.id,
    type: stored.type,
    timestamp: stored.timestamp,
    organizationId: stored.organizationId,
    data: stored.data,
  });
  return targets.map((webhook) => ({
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
  }));
}

/**
 * Stream consumer: every committed domain event becomes one delivery per active webhook of its
 * organization that subscribes to its type, queued with the delivery inside the job, and, for the
 * conversation events Discord channels subscribe to, one notification job per such channel. Per batch of
 * up to 100 events: one BatchGetItem for the events (read as stored rather than decoded from the
 * stream image: one decoding path for AWS and the local emulator, whose stream client renders empty
 * maps ambiguously), one Query per organization for its webhooks, SendMessageBatch ten jobs at a
 * time. If anything fails the whole batch is reported and the stream delivers it again: nothing is
 * lost, and a receiver may see a delivery twice (at least once; `webhook-id` tells repeats apart).
 */
export const handler = async (
  event: DynamoDBStreamEvent,
  context: Context,
): Promise<DynamoDBBatchResponse> => {
  beginRequest(context.awsRequestId);
  captureColdStart();
  const records = event.Records.filter(
    (record) => record.eventName === 'INSERT' && record.dynamodb?.NewImage?.entity?.S === 'event',
  );
  if (records.length === 0) return { batchItemFailures: [] };
  try {
    const keys = records.flatMap((record) => {
      const pk = record.dynamodb?.Keys?.pk?.S;
      const sk = record.dynamodb?.Keys?.sk?.S;
      return pk && sk ? [{ pk, sk }] : [];
    });
    const stored = (await batchGet(keys, { consistent: true })).map(toDomainEvent);
    // One strongly consistent read of each organization's webhooks per batch: a webhook created a
    // moment ago already receives the next event.
    const subscribers = new Map<string, Promise<StoredWebhook[]>>();
    for (const { organizationId } of stored) {
      if (!subscribers.has(organizationId))
        subscribers.set(organizationId, allWebhooks(organizationId, { consistent: true }));
    }
    const planned = Promise.all(
      stored.map(async (domainEvent) =>
        deliveriesOf(domainEvent, (await subscribers.get(domainEvent.organizationId)) ?? []),
      ),
    );
    // Discord channels subscribe to conversation events the same way: one more job queue, read
    // from the same committed events (one stream reader for both; DynamoDB Streams allows few).
    await Promise.all([
      planned.then((deliveries) => queueFirstAttempts(deliveries.flat())),
      discordJobsFor(stored).then(queueDiscordJobs),
    ]);
    return { batchItemFailures: [] };
  } catch (error) {
    logger.error('webhook fan-out failed', { error: error as Error, records: records.length });
    // Reporting the first record retries the whole batch from it: repeats are harmless.
    return { batchItemFailures: [{ itemIdentifier: records[0]?.dynamodb?.SequenceNumber ?? '' }] };
  }
};
