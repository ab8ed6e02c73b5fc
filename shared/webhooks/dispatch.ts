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
  await deliveries.create(delivery);
  await enqueueDelivery({ orgId: delivery.orgId, webhookId: delivery.webhookId, deliveryId: delivery.id });
}
