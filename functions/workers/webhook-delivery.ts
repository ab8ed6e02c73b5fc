import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { clock } from '../../shared/clock';
import { config } from '../../shared/config';
import { deliveries, type StoredDelivery } from '../../shared/db/deliveries';
import { activeSecrets, webhooks } from '../../shared/db/webhooks';
import { log } from '../../shared/logger';
import * as z from '../../shared/schemas/zod';
import { postWebhook } from '../../shared/webhooks/client';
import { type DeliveryJob, enqueueDelivery } from '../../shared/webhooks/dispatch';
import { webhookHeaders } from '../../shared/webhooks/signing';
import { parseAllowedTargets } from '../../shared/webhooks/targets';

const allowed = parseAllowedTargets(config.webhookAllowedTargets);
const schedule = config.webhookRetrySchedule;
const DELIVERY_TIMEOUT_MS = 10_000;

const deliveryJob = z.strictObject({
  orgId: z.uuid(),
  webhookId: z.uuid(),
  deliveryId: z.uuid(),
  notBefore: z.optional(z.string()),
  manual: z.optional(z.boolean()),
});

/** The state a failed attempt leads to: the next try on the schedule, or failed when it is spent. */
function afterFailure(delivery: StoredDelivery, manual: boolean, nowMs: number) {
  const attemptNumber = delivery.attempts + 1;
  const delaySeconds = manual ? undefined : schedule[attemptNumber - 1];
  if (delaySeconds === undefined) return { status: 'failed' as const, nextAttemptAt: null };
  return { status: 'pending' as const, nextAttemptAt: new Date(nowMs + delaySeconds * 1000).toISOString() };
}

type WebhookReader = (orgId: string, webhookId: string) => ReturnType<typeof webhooks.get>;

async function attempt(job: DeliveryJob, webhookOf: WebhookReader): Promise<void> {
  if (job.notBefore && Date.parse(job.notBefore) > clock.nowMs()) {
    // A wait longer than SQS's 15-minute delay: back to the queue for the rest of it.
    await enqueueDelivery(job);
    return;
  }
  const [webhook, delivery] = await Promise.all([
    webhookOf(job.orgId, job.webhookId),
    deliveries.get(job.orgId, job.webhookId, job.deliveryId),
  ]);
  // A deleted webhook receives nothing more; a delivery already settled needs nothing.
  if (!webhook || !delivery || delivery.status !== 'pending') return;
  if (!webhook.active) {
    await deliveries.recordAttempt(delivery, {
      status: 'failed',
      responseStatus: null,
      error: 'webhook_inactive',
      lastAttemptAt: clock.nowIso(),
      nextAttemptAt: null,
    });
    return;
  }
  const timestamp = Math.floor(clock.nowMs() / 1000);
  const result = await postWebhook({
    url: webhook.url,
    headers: webhookHeaders(
      { id: delivery.eventId, timestamp, body: delivery.payload },
      activeSecrets(webhook),
    ),
    body: delivery.payload,
    timeoutMs: DELIVERY_TIMEOUT_MS,
    allowed,
  });
  const now = clock.nowMs();
  const next = result.ok
    ? { status: 'succeeded' as const, nextAttemptAt: null }
    : afterFailure(delivery, job.manual === true, now);
  const recorded = await deliveries.recordAttempt(delivery, {
    ...next,
    responseStatus: result.status,
    error: result.ok ? null : result.error,
    lastAttemptAt: new Date(now).toISOString(),
  });
  // Only the attempt that recorded itself schedules the next one (duplicate messages do not fork).
  if (recorded && next.status === 'pending' && next.nextAttemptAt) {
    await enqueueDelivery({
      orgId: job.orgId,
      webhookId: job.webhookId,
      deliveryId: job.deliveryId,
      notBefore: next.nextAttemptAt,
    });
  }
}

/**
 * Queue consumer: one signed POST per message (Standard Webhooks headers; `webhook-id` is the event
 * id, stable across retries), the target checked again at connect time, no redirects, 10 s. Every
 * attempt is recorded; a failure is retried on WEBHOOK_RETRY_SCHEDULE and the delivery is `failed`
 * once the schedule is spent. Messages of a batch run concurrently; only the ones that could not be
 * processed (storage or queue errors) are reported back for SQS to redeliver.
 */
export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  log.beginRequest(context.awsRequestId);
  // One strong read per webhook per batch: the batch's attempts all see the webhook as it is now,
  // so a deletion or pause still stops every later batch.
  const read = new Map<string, ReturnType<typeof webhooks.get>>();
  const webhookOf: WebhookReader = (orgId, webhookId) => {
    const key = `${orgId}/${webhookId}`;
    let found = read.get(key);
    if (!found) {
      found = webhooks.get(orgId, webhookId);
      read.set(key, found);
    }
    return found;
  };
  const outcomes = await Promise.allSettled(
    event.Records.map(async (record) => attempt(deliveryJob.parse(JSON.parse(record.body)), webhookOf)),
  );
  const batchItemFailures = outcomes.flatMap((outcome, i) => {
    if (outcome.status === 'fulfilled') return [];
    log.error('webhook delivery failed to process', {
      error: outcome.reason as Error,
      messageId: event.Records[i]?.messageId,
    });
    return [{ itemIdentifier: event.Records[i]?.messageId ?? '' }];
  });
  return { batchItemFailures };
};
