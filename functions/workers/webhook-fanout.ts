import type { DynamoDBRecord } from 'aws-lambda';
import { batchGet } from '../../shared/db/batch';
import { deliveryIdFor, pendingDelivery, type StoredDelivery } from '../../shared/db/deliveries';
import { type DomainEvent, toDomainEvent } from '../../shared/db/events';
import { allWebhooks, type StoredWebhook } from '../../shared/db/webhooks';
import { type DiscordJob, discordJobsFor, queueDiscordJobs } from '../../shared/discord/fanout';
import { logger } from '../../shared/logger';
import { streamBatchWorker } from '../../shared/stream-batch';
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
  return targets.map((webhook) =>
    pendingDelivery({
      id: deliveryIdFor(webhook.id, stored.id),
      orgId: stored.organizationId,
      webhookId: webhook.id,
      eventId: stored.id,
      event: stored.type,
      createdAt: stored.timestamp,
      payload,
    }),
  );
}

/** What one event asks for: its deliveries and Discord notifications, or why they cannot be known. */
type Plan = { deliveries: StoredDelivery[]; discord: DiscordJob[] } | { error: unknown };

interface Fanout {
  /** By record: only the records of events still stored (an expired one has nothing to deliver). */
  plans: Map<DynamoDBRecord, Plan>;
  /** Whether the batch's jobs of that queue were all queued at once. */
  deliveriesQueued: boolean;
  discordQueued: boolean;
}

const isEventInsert = (record: DynamoDBRecord): boolean =>
  record.eventName === 'INSERT' && record.dynamodb?.NewImage?.entity?.S === 'event';

const keyOf = (pk: unknown, sk: unknown): string => `${String(pk)}\n${String(sk)}`;

/** Each record's plan: its event as stored, against its organization's webhooks and Discord channels. */
async function plan(records: readonly DynamoDBRecord[]): Promise<Map<DynamoDBRecord, Plan>> {
  const plans = new Map<DynamoDBRecord, Plan>();
  const wanted = records.flatMap((record) => {
    const pk = record.dynamodb?.Keys?.pk?.S;
    const sk = record.dynamodb?.Keys?.sk?.S;
    return pk && sk ? [{ record, key: { pk, sk } }] : [];
  });
  if (wanted.length === 0) return plans;
  const items = await batchGet(
    wanted.map(({ key }) => key),
    { consistent: true },
  );
  const byKey = new Map(items.map((item) => [keyOf(item.pk, item.sk), item]));
  const events = new Map<DynamoDBRecord, DomainEvent>();
  for (const { record, key } of wanted) {
    const item = byKey.get(keyOf(key.pk, key.sk));
    if (!item) continue;
    try {
      events.set(record, toDomainEvent(item));
    } catch (error) {
      // An event that cannot be read (its data does not decode) fails alone.
      plans.set(record, { error });
    }
  }
  // One strongly consistent read of each organization's webhooks and Discord channels per batch: a
  // webhook created a moment ago already receives the next event. A failed read fails the records
  // of that organization only.
  const byOrganization = new Map<string, DomainEvent[]>();
  for (const domainEvent of events.values()) {
    const ofOrganization = byOrganization.get(domainEvent.organizationId) ?? [];
    ofOrganization.push(domainEvent);
    byOrganization.set(domainEvent.organizationId, ofOrganization);
  }
  const webhooksOf = new Map<string, Promise<StoredWebhook[]>>();
  const discordOf = new Map<string, Promise<DiscordJob[]>>();
  for (const [organizationId, ofOrganization] of byOrganization) {
    webhooksOf.set(organizationId, allWebhooks(organizationId, { consistent: true }));
    // Discord channels subscribe to conversation events the same way: one more job queue, read
    // from the same committed events (one stream reader for both; DynamoDB Streams allows few).
    discordOf.set(organizationId, discordJobsFor(ofOrganization));
  }
  // Every read is awaited at once (no rejection goes unhandled while another is awaited).
  await Promise.all(
    [...events].map(async ([record, domainEvent]) => {
      try {
        const [subscribers = [], discord = []] = await Promise.all([
          webhooksOf.get(domainEvent.organizationId),
          discordOf.get(domainEvent.organizationId),
        ]);
        plans.set(record, {
          deliveries: deliveriesOf(domainEvent, subscribers),
          discord: discord.filter((job) => job.eventId === domainEvent.id),
        });
      } catch (error) {
        plans.set(record, { error });
      }
    }),
  );
  return plans;
}

/**
 * Stream consumer: every committed domain event becomes one delivery per active webhook of its
 * organization that subscribes to its type, queued with the delivery inside the job, and, for the
 * conversation events Discord channels subscribe to, one notification job per such channel. Per batch of
 * up to 100 events: one BatchGetItem for the events (read as stored rather than decoded from the
 * stream image: one decoding path for AWS and the local emulator, whose stream client renders empty
 * maps ambiguously), one Query per organization for its webhooks, SendMessageBatch ten jobs at a
 * time. A queue that does not take all of the batch's jobs is sent each record's jobs again, record
 * by record: only the records whose own jobs fail are reported, and the stream delivers them again.
 * Nothing is lost, and a receiver may see a delivery twice (at least once; `webhook-id` tells
 * repeats apart, as the nonce does for Discord).
 */
export const handler = streamBatchWorker<Fanout>('webhook fan-out', {
  async prepare(records) {
    const plans = await plan(records.filter(isEventInsert));
    const planned = [...plans.values()].flatMap((each) => ('error' in each ? [] : [each]));
    const [deliveries, discord] = await Promise.allSettled([
      queueFirstAttempts(planned.flatMap((each) => each.deliveries)),
      queueDiscordJobs(planned.flatMap((each) => each.discord)),
    ]);
    for (const outcome of [deliveries, discord])
      if (outcome.status === 'rejected')
        logger.warn('webhook fan-out: jobs not all queued at once, queueing record by record', {
          error: outcome.reason as Error,
        });
    return {
      plans,
      deliveriesQueued: deliveries.status === 'fulfilled',
      discordQueued: discord.status === 'fulfilled',
    };
  },
  async handle(record, { plans, deliveriesQueued, discordQueued }) {
    const mine = plans.get(record);
    if (!mine) return;
    if ('error' in mine) throw mine.error;
    if (!deliveriesQueued) await queueFirstAttempts(mine.deliveries);
    if (!discordQueued) await queueDiscordJobs(mine.discord);
  },
});
