import { clock } from '../clock';
import { deliveries, type StoredDelivery } from '../db/deliveries';
import { queues } from '../queues';

/** What the delivery queue carries: which delivery to attempt, and not before when (long delays). */
export interface DeliveryJob {
  orgId: string;
  webhookId: string;
  deliveryId: string;
  /** ISO instant: a job received earlier goes back to the queue for the rest of its delay. */
  notBefore?: string;
  /** A manual retry is one attempt, not a new schedule. */
  manual?: boolean;
}

/** SQS delays a message at most 15 minutes; longer waits hop through the queue in 15-minute steps. */
export const MAX_QUEUE_DELAY_SECONDS = 900;

export async function enqueueDelivery(job: DeliveryJob): Promise<void> {
  const waitMs = job.notBefore ? Date.parse(job.notBefore) - clock.nowMs() : 0;
  const delaySeconds = Math.min(MAX_QUEUE_DELAY_SECONDS, Math.max(0, Math.ceil(waitMs / 1000)));
  await queues.send('webhook-deliveries', job, delaySeconds);
}

/** Creates a delivery record and queues its first attempt now. */
export async function startDelivery(delivery: StoredDelivery): Promise<void> {
  await startDeliveries([delivery]);
}

/**
 * Creates the delivery records, then queues their first attempts ten per SendMessageBatch. A
 * record that already exists (a replayed stream batch) is queued again: at least once, and the
 * attempt's own condition keeps a duplicate from counting twice.
 */
export async function startDeliveries(batch: readonly StoredDelivery[]): Promise<void> {
  await Promise.all(batch.map((delivery) => deliveries.create(delivery)));
  for (let start = 0; start < batch.length; start += 10) {
    const jobs: DeliveryJob[] = batch
      .slice(start, start + 10)
      .map((delivery) => ({ orgId: delivery.orgId, webhookId: delivery.webhookId, deliveryId: delivery.id }));
    const failed = await queues.sendBatch('webhook-deliveries', jobs);
    if (failed.length) throw new Error(`${failed.length} delivery jobs were not queued`);
  }
}
