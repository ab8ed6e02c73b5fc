import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { queueWorker } from '../../shared/batch';
import { config } from '../../shared/config';
import { discordChannels } from '../../shared/db/discord-channels';
import { postMessage } from '../../shared/discord/client';
import { logger } from '../../shared/logger';
import { publishDiscordPosts } from '../../shared/metrics';
import type { QueueJob } from '../../shared/queue-jobs';
import { queues } from '../../shared/queues';

type DiscordJob = QueueJob<'discord-notifications'>;

const schedule = config.discordRetrySchedule;
/** A 429 this short is waited out in place (then the message is posted again at once). */
const WAIT_IN_PLACE_MS = 2_000;
const WAITS_IN_PLACE = 3;
/** A job rate-limited this often is treated as failing (retried on the schedule, then dead letters). */
const MAX_RATE_LIMITED = 50;
/** SQS delays a message at most 15 minutes. */
const MAX_QUEUE_DELAY_SECONDS = 900;
/** Time kept back for answering the batch. */
const SAFETY_MS = 3_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `posted`: Discord accepted it; `done`: settled without a post (dropped, or re-queued after a 429). */
type Settled = 'posted' | 'done' | 'failed';

/** A failure worth retrying: the message shows again after the schedule's delay for this attempt. */
async function retryLater(record: SQSRecord, job: DiscordJob, reason: string): Promise<Settled> {
  const attempt = Number(record.attributes.ApproximateReceiveCount ?? '1') || 1;
  const delay = schedule[attempt - 1];
  logger.warn('discord notification failed; retrying', {
    orgId: job.orgId,
    channelId: job.channelId,
    eventId: job.eventId,
    attempt,
    reason,
    nextInSeconds: delay ?? null,
  });
  // Past the schedule: shown again at once, so the queue's redrive moves it to the dead letters.
  await queues
    .changeVisibility('discord-notifications', record.receiptHandle, delay ?? 0)
    .catch((error: unknown) => logger.warn('visibility not changed', { error: error as Error }));
  return 'failed';
}

/**
 * One notification: checks the channel is still configured (and subscribed), then posts; a short
 * 429 is waited out here, a longer one goes back to the queue with Discord's delay (not counted as
 * a failure), anything else that may pass is retried on DISCORD_RETRY_SCHEDULE by the message's
 * visibility and ends in the dead-letter queue; what Discord will never accept is dropped (logged).
 */
async function deliver(record: SQSRecord, job: DiscordJob, context: Context): Promise<Settled> {
  const attempt = Number(record.attributes.ApproximateReceiveCount ?? '1') || 1;
  if (attempt > schedule.length + 1) return retryLater(record, job, 'retries_exhausted');
  const channel = await discordChannels.getByChannelId(job.orgId, job.channelId);
  if (!channel || channel.id !== job.configId || !channel.events.includes(job.event)) {
    logger.info('discord notification dropped: the channel is no longer configured for it', {
      orgId: job.orgId,
      channelId: job.channelId,
      eventId: job.eventId,
    });
    return 'done';
  }
  for (let waited = 0; ; waited++) {
    const outcome = await postMessage(job.channelId, job.message);
    if (outcome.kind === 'delivered') return 'posted';
    if (outcome.kind === 'rejected') {
      logger.warn('discord notification rejected by Discord: dropped', {
        orgId: job.orgId,
        channelId: job.channelId,
        eventId: job.eventId,
        reason: outcome.reason,
      });
      return 'done';
    }
    if (outcome.kind === 'retry') return retryLater(record, job, outcome.reason);
    const rateLimited = (job.rateLimited ?? 0) + 1;
    if (rateLimited > MAX_RATE_LIMITED) return retryLater(record, job, 'rate_limited_too_often');
    const left = context.getRemainingTimeInMillis() - SAFETY_MS;
    if (outcome.retryAfterMs <= WAIT_IN_PLACE_MS && waited < WAITS_IN_PLACE && outcome.retryAfterMs < left) {
      await sleep(outcome.retryAfterMs);
      continue;
    }
    // Not before Discord's retry_after: the same job, sent back with that delay (SQS: whole seconds).
    const delaySeconds = Math.min(
      MAX_QUEUE_DELAY_SECONDS,
      Math.max(1, Math.ceil(outcome.retryAfterMs / 1000)),
    );
    await queues.send('discord-notifications', { ...job, rateLimited }, delaySeconds);
    return 'done';
  }
}

/** The tail of each channel's lane in the batch being handled: its next job waits for it. */
const lanes = new Map<string, Promise<unknown>>();

/**
 * Queue consumer of `discord-notifications`. Jobs of one channel are posted one after another (in
 * queue order, so a 429 holds back that channel's next post too); channels in parallel. Only the
 * messages to retry are reported back to SQS.
 */
const consume = queueWorker(
  'discord-notifications',
  async (job, record, context) => {
    const before = lanes.get(job.channelId) ?? Promise.resolve();
    const settled = before.then(() => deliver(record, job, context));
    const tail = settled.catch(() => undefined);
    lanes.set(job.channelId, tail);
    const outcome = await settled;
    if (lanes.get(job.channelId) === tail) lanes.delete(job.channelId);
    if (outcome === 'posted') posted += 1;
    else if (outcome === 'failed') throw new Error('discord notification to be retried');
  },
  { parallel: true },
);

let posted = 0;

export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  posted = 0;
  const response = await consume(event, context);
  publishDiscordPosts(posted);
  return response;
};
