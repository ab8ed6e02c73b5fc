import type { SQSRecord } from 'aws-lambda';
import { log } from './logger';
import { captureColdStart, type MetricEntry, publishFunctionMetrics, publishMetrics, Unit } from './metrics';
import {
  DISCORD_POSTS,
  EMAILS_SENT,
  EXPORT_METRICS,
  QUEUE_JOB_AGE,
  WEBHOOK_DELIVERIES,
  WEBHOOK_DELIVERY_ATTEMPTS,
} from './metrics-contract';

/** Metrics never fail a batch: a malformed one is logged and dropped. */
function safely(publish: () => void): void {
  try {
    publish();
  } catch (error) {
    log.warn('metrics not published', { error: error instanceof Error ? error.message : String(error) });
  }
}

/** At the start of an SQS batch: the cold start, and how long each job waited in the queue. */
export function observeQueueBatch(records: readonly SQSRecord[], nowMs: number): void {
  captureColdStart();
  const ages: MetricEntry[] = [];
  for (const record of records) {
    const sentAt = Number(record.attributes?.SentTimestamp);
    if (Number.isFinite(sentAt)) ages.push([QUEUE_JOB_AGE, Unit.Milliseconds, Math.max(0, nowMs - sentAt)]);
  }
  safely(() => publishFunctionMetrics(ages));
}

export type DeliveryOutcome = (typeof WEBHOOK_DELIVERIES.outcomes)[number];

/**
 * The webhook attempts of one batch, counted per outcome (the dimension set the alarms read:
 * `service` + `outcome`) and per outcome and attempt number (which retry finally got through).
 */
export function publishWebhookAttempts(
  attempts: readonly { outcome: DeliveryOutcome; attempt: number }[],
): void {
  const byOutcome = new Map<DeliveryOutcome, number>();
  const byAttempt = new Map<string, { outcome: DeliveryOutcome; attempt: number; count: number }>();
  for (const { outcome, attempt } of attempts) {
    byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1);
    const key = `${outcome}#${attempt}`;
    const entry = byAttempt.get(key) ?? { outcome, attempt, count: 0 };
    entry.count += 1;
    byAttempt.set(key, entry);
  }
  safely(() => {
    for (const [outcome, count] of byOutcome)
      publishMetrics({ [WEBHOOK_DELIVERIES.dimension]: outcome }, [
        [WEBHOOK_DELIVERIES.name, Unit.Count, count],
      ]);
    for (const { outcome, attempt, count } of byAttempt.values())
      publishMetrics(
        { [WEBHOOK_DELIVERIES.dimension]: outcome, [WEBHOOK_DELIVERY_ATTEMPTS.dimension]: String(attempt) },
        [[WEBHOOK_DELIVERY_ATTEMPTS.name, Unit.Count, count]],
      );
  });
}

/** One export (streamed or a PDF job): its rows when it has rows, and its bytes. */
export function publishExportMetrics(rows: number | undefined, bytes: number): void {
  const entries: MetricEntry[] = [[EXPORT_METRICS.bytes, Unit.Bytes, bytes]];
  if (rows !== undefined) entries.push([EXPORT_METRICS.rows, Unit.Count, rows]);
  safely(() => publishFunctionMetrics(entries));
}

/** One e-mail accepted by SES. */
export function publishEmailSent(): void {
  safely(() => publishFunctionMetrics([[EMAILS_SENT, Unit.Count, 1]]));
}

/** Messages posted to Discord by one batch. */
export function publishDiscordPosts(count: number): void {
  if (count > 0) safely(() => publishFunctionMetrics([[DISCORD_POSTS, Unit.Count, count]]));
}
