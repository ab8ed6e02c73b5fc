import { queueBatchWorker } from '../../shared/batch';
import { clock } from '../../shared/clock';
import { config } from '../../shared/config';
import { deliveries, pendingDelivery, type StoredDelivery } from '../../shared/db/deliveries';
import { activeSecrets, type StoredWebhook, webhooksByIds } from '../../shared/db/webhooks';
import { type DeliveryOutcome, publishWebhookAttempts } from '../../shared/metrics';
import { postWebhook } from '../../shared/webhooks/client';
import { type DeliveryJob, enqueueDelivery } from '../../shared/webhooks/dispatch';
import { webhookHeaders } from '../../shared/webhooks/signing';
import { parseAllowedTargets } from '../../shared/webhooks/targets';

const allowed = parseAllowedTargets(config.webhookAllowedTargets);
const schedule = config.webhookRetrySchedule;
const DELIVERY_TIMEOUT_MS = 10_000;

type Outcome = Pick<
  StoredDelivery,
  'status' | 'responseStatus' | 'error' | 'lastAttemptAt' | 'nextAttemptAt'
>;

/** The state a failed attempt leads to: the next try on the schedule, or failed when it is spent. */
function afterFailure(attempts: number, manual: boolean, nowMs: number) {
  const delaySeconds = manual ? undefined : schedule[attempts];
  if (delaySeconds === undefined) return { status: 'failed' as const, nextAttemptAt: null };
  return { status: 'pending' as const, nextAttemptAt: new Date(nowMs + delaySeconds * 1000).toISOString() };
}

/** The delivery as it stands before this attempt: carried by a first attempt's job, else stored. */
async function deliveryOf(job: DeliveryJob): Promise<StoredDelivery | undefined> {
  if (!job.first) return deliveries.get(job.orgId, job.webhookId, job.deliveryId);
  return pendingDelivery({ ...job.first, id: job.deliveryId, orgId: job.orgId, webhookId: job.webhookId });
}

/** One attempt: signs and POSTs, or fails at once when the webhook is paused (a deleted one never gets here). */
async function attempt(delivery: StoredDelivery, webhook: StoredWebhook, manual: boolean): Promise<Outcome> {
  const startedAt = clock.nowIso();
  if (!webhook.active) {
    return {
      status: 'failed',
      responseStatus: null,
      error: 'webhook_inactive',
      lastAttemptAt: startedAt,
      nextAttemptAt: null,
    };
  }
  const result = await postWebhook({
    url: webhook.url,
    headers: webhookHeaders(
      { id: delivery.eventId, timestamp: Math.floor(clock.nowMs() / 1000), body: delivery.payload },
      await activeSecrets(delivery.orgId, webhook),
    ),
    body: delivery.payload,
    timeoutMs: DELIVERY_TIMEOUT_MS,
    allowed,
  });
  const now = clock.nowMs();
  return {
    ...(result.ok
      ? { status: 'succeeded' as const, nextAttemptAt: null }
      : afterFailure(delivery.attempts, manual, now)),
    responseStatus: result.status,
    error: result.ok ? null : result.error,
    lastAttemptAt: new Date(now).toISOString(),
  };
}

/**
 * Records the outcome and schedules what follows. A first attempt that succeeded joins the batch's
 * one BatchWriteItem (returned); every other outcome is written on its own, conditioned on the
 * attempts seen, so a duplicate SQS message neither counts twice nor forks the retry schedule.
 */
async function settle(
  job: DeliveryJob,
  delivery: StoredDelivery,
  outcome: Outcome,
): Promise<StoredDelivery | undefined> {
  const settled: StoredDelivery = { ...delivery, ...outcome, attempts: delivery.attempts + 1 };
  if (job.first && outcome.status === 'succeeded') return settled;
  const recorded = job.first
    ? await deliveries.create(settled)
    : await deliveries.recordAttempt(delivery, outcome);
  if (recorded && outcome.status === 'pending' && outcome.nextAttemptAt) {
    await enqueueDelivery({
      orgId: job.orgId,
      webhookId: job.webhookId,
      deliveryId: job.deliveryId,
      notBefore: outcome.nextAttemptAt,
    });
  }
  return undefined;
}

/**
 * Queue consumer: one signed POST per message (Standard Webhooks headers; `webhook-id` is the event
 * id, stable across retries), the target checked again at connect time, no redirects, 10 s. Every
 * attempt is recorded; a failure is retried on WEBHOOK_RETRY_SCHEDULE and the delivery is `failed`
 * once the schedule is spent. Per batch: one consistent BatchGetItem for its webhooks (a deletion
 * or pause stops every later batch), the POSTs concurrently, one BatchWriteItem for the first
 * attempts that succeeded. Only messages that could not be processed (storage or queue errors) are
 * reported back for SQS to redeliver.
 */
export const handler = queueBatchWorker(
  'webhook-deliveries',
  {
    async prepare(jobs) {
      // Started, not awaited: a message waits for its own organization's read only.
      const webhooksOf = new Map<string, Promise<Map<string, StoredWebhook>>>();
      for (const orgId of new Set(jobs.map((job) => job.orgId))) {
        const ids = [...new Set(jobs.filter((job) => job.orgId === orgId).map((job) => job.webhookId))];
        const read = webhooksByIds(orgId, ids);
        // Awaited by the messages that need it; when every message of the organization is deferred
        // none does, and a failed read must not end the invocation (and redeliver POSTs made).
        read.catch(() => undefined);
        webhooksOf.set(orgId, read);
      }
      return { webhooksOf, attempted: [] as { outcome: DeliveryOutcome; attempt: number }[] };
    },
    async handle(job, _record, { webhooksOf, attempted }) {
      if (job.notBefore && Date.parse(job.notBefore) > clock.nowMs()) {
        // A wait longer than SQS's 15-minute delay: back to the queue for the rest of it.
        await enqueueDelivery(job);
        return undefined;
      }
      const [webhook, delivery] = await Promise.all([
        webhooksOf.get(job.orgId)?.then((found) => found.get(job.webhookId)),
        deliveryOf(job),
      ]);
      // A deleted webhook receives nothing more; a delivery already settled needs nothing.
      if (!webhook || !delivery || delivery.status !== 'pending') return undefined;
      const outcome = await attempt(delivery, webhook, job.manual === true);
      attempted.push({
        outcome: outcome.status === 'succeeded' ? 'succeeded' : 'failed',
        attempt: delivery.attempts + 1,
      });
      return settle(job, delivery, outcome);
    },
    // Unrecorded successes go back to SQS too: the receiver may see them again (at least once).
    async commit(succeeded, { attempted }) {
      // Here, once every attempt of the batch is made: one publish per batch.
      publishWebhookAttempts(attempted);
      await deliveries.recordFirstSuccesses(succeeded);
    },
  },
  { parallel: true },
);
