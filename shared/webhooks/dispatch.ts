import { clock } from '../clock';
import { deliveries, type StoredDelivery } from '../db/deliveries';
import type { QueueJob } from '../queue-jobs';
import { queues } from '../queues';

/** What the delivery queue carries: which delivery to attempt, and not before when (long delays). */
export type DeliveryJob = QueueJob<'webhook-deliveries'>;

export type FirstAttempt = Pick<StoredDelivery, 'eventId' | 'event' | 'createdAt' | 'payload'>;

/** Payloads up to this size travel in the job; larger ones are stored first and read by the worker. */
const INLINE_PAYLOAD_BYTES = 64 * 1024;
/** SQS takes at most 10 messages and 256 KiB per SendMessageBatch. */
const BATCH_ENTRIES = 10;
const BATCH_BYTES = 240 * 1024;
/** SendMessageBatch calls in flight at once per fan-out. */
const SEND_CONCURRENCY = 16;

/** SQS delays a message at most 15 minutes; longer waits hop through the queue in 15-minute steps. */
export const MAX_QUEUE_DELAY_SECONDS = 900;

export async function enqueueDelivery(job: DeliveryJob): Promise<void> {
  const waitMs = job.notBefore ? Date.parse(job.notBefore) - clock.nowMs() : 0;
  const delaySeconds = Math.min(MAX_QUEUE_DELAY_SECONDS, Math.max(0, Math.ceil(waitMs / 1000)));
  await queues.send('webhook-deliveries', job, delaySeconds);
}

/** Creates a delivery record and queues its first attempt now (the record is visible at once). */
export async function startDelivery(delivery: StoredDelivery): Promise<void> {
  await deliveries.create(delivery);
  await sendJobs([referenceTo(delivery)]);
}

/**
 * Queues the first attempt of each delivery, carrying the delivery itself: no table write before
 * the attempt (the worker records its outcome). A payload too large to travel is stored first and
 * referenced. Nothing is lost: the caller sees an error unless every job was accepted by SQS.
 */
export async function queueFirstAttempts(batch: readonly StoredDelivery[]): Promise<void> {
  const jobs = await Promise.all(
    batch.map(async (delivery): Promise<DeliveryJob> => {
      if (Buffer.byteLength(delivery.payload) <= INLINE_PAYLOAD_BYTES) {
        const { eventId, event, createdAt, payload } = delivery;
        return { ...referenceTo(delivery), first: { eventId, event, createdAt, payload } };
      }
      await deliveries.create(delivery);
      return referenceTo(delivery);
    }),
  );
  await sendJobs(jobs);
}

function referenceTo(delivery: StoredDelivery): DeliveryJob {
  return { orgId: delivery.orgId, webhookId: delivery.webhookId, deliveryId: delivery.id };
}

/** Packs the jobs into SendMessageBatch calls by count and bytes and sends them, a few at a time. */
async function sendJobs(jobs: readonly DeliveryJob[]): Promise<void> {
  const batches: DeliveryJob[][] = [];
  let current: DeliveryJob[] = [];
  let bytes = 0;
  for (const job of jobs) {
    const size = Buffer.byteLength(JSON.stringify(job));
    if (current.length === BATCH_ENTRIES || (current.length > 0 && bytes + size > BATCH_BYTES)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(job);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  let next = 0;
  let unsent = 0;
  const lanes = Array.from({ length: Math.min(SEND_CONCURRENCY, batches.length) }, async () => {
    for (let batch = batches[next++]; batch; batch = batches[next++]) {
      unsent += (await queues.sendBatch('webhook-deliveries', batch)).length;
    }
  });
  await Promise.all(lanes);
  if (unsent > 0) throw new Error(`${unsent} delivery jobs were not queued`);
}
