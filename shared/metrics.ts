import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { SQSRecord } from 'aws-lambda';
import { logger } from './logger';
import {
  DISCORD_POSTS,
  EMAILS_SENT,
  EXPORT_METRICS,
  FUNCTION_DIMENSION,
  METRICS_NAMESPACE,
  METRICS_SERVICE,
  QUEUE_JOB_AGE,
  REQUEST_METRICS,
  ROUTE_DIMENSION,
  SEARCH_METRICS,
  WEBHOOK_DELIVERIES,
  WEBHOOK_DELIVERY_ATTEMPTS,
} from './metrics-contract';

/**
 * CloudWatch metrics as Embedded Metric Format lines on stdout (Powertools Metrics): CloudWatch Logs
 * extracts them, so emitting one costs no API call. The names and dimensions live in
 * `metrics-contract.ts`, which the stack's alarms and dashboard read too. Dimensions stay
 * low-cardinality (service, function, route, outcome): a tenant's figures belong in the access log.
 */
export const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: METRICS_SERVICE });

/** The endpoint group or worker this instance runs (CDK sets it per function); `local` elsewhere. */
export const functionName = process.env.SERVICE_FUNCTION || 'local';

type MetricEntry = readonly [name: string, unit: (typeof MetricUnit)[keyof typeof MetricUnit], value: number];

/**
 * Values per EMF line: the library publishes by itself when one metric reaches 100 values, and then
 * drops the dimensions, so the rest of the call would go out without them and the call's own
 * publish would find nothing ("No application metrics to publish"). A stream batch of 100 records
 * reaches it.
 */
const VALUES_PER_LINE = 99;

/**
 * Metrics that share one dimension set (besides `service`), published at once (one EMF line per
 * VALUES_PER_LINE entries). Synchronous, so the one instance never mixes two callers' figures.
 * Metrics never fail a request or a batch: one the library rejects is logged and dropped.
 */
export function publishMetrics(
  dimensions: Readonly<Record<string, string>>,
  entries: readonly MetricEntry[],
): void {
  try {
    for (let from = 0; from < entries.length; from += VALUES_PER_LINE) {
      metrics.addDimensions(dimensions);
      for (const [name, unit, value] of entries.slice(from, from + VALUES_PER_LINE))
        metrics.addMetric(name, unit, value);
      metrics.publishStoredMetrics();
    }
  } catch (error) {
    metrics.clearMetrics();
    metrics.clearDimensions();
    logger.warn('metrics not published', { error: error instanceof Error ? error.message : String(error) });
  }
}

/** Per-function figures (exports, e-mails, Discord posts): dimensions `service` + `function`. */
const publishFunctionMetrics = (entries: readonly MetricEntry[]) =>
  publishMetrics({ [FUNCTION_DIMENSION]: functionName }, entries);

/** `ColdStart` once per on-demand instance, on its first invocation: dimensions `service` + `function_name`. */
export function captureColdStart(): void {
  metrics.captureColdStartMetric(functionName);
}

/** The figures of one API request. */
export interface RequestFigures {
  status: number;
  latencyMs: number;
  dynamoDbRetries: number;
  dynamoDbThrottles: number;
}

/**
 * One EMF line per API request, dimensions `service` + `route`. Every status-class metric is 0 or
 * 1, so its Average is the class's rate among the route's requests and its Sum the count.
 */
export function publishRequestMetrics(
  route: string,
  { status, latencyMs, dynamoDbRetries, dynamoDbThrottles }: RequestFigures,
): void {
  const statusClass = Math.floor(status / 100);
  const flag = (on: boolean) => (on ? 1 : 0);
  publishMetrics({ [ROUTE_DIMENSION]: route }, [
    [REQUEST_METRICS.latency, MetricUnit.Milliseconds, latencyMs],
    [REQUEST_METRICS.requests, MetricUnit.Count, 1],
    [REQUEST_METRICS.status2xx, MetricUnit.Count, flag(statusClass === 2 || statusClass === 3)],
    [REQUEST_METRICS.status4xx, MetricUnit.Count, flag(statusClass === 4)],
    [REQUEST_METRICS.status5xx, MetricUnit.Count, flag(statusClass >= 5)],
    [REQUEST_METRICS.conflicts, MetricUnit.Count, flag(status === 409 || status === 412)],
    [REQUEST_METRICS.dynamoDbRetries, MetricUnit.Count, dynamoDbRetries],
    [REQUEST_METRICS.dynamoDbThrottles, MetricUnit.Count, dynamoDbThrottles],
  ]);
}

/** At the start of an SQS batch: the cold start, and how long each job waited in the queue. */
export function observeQueueBatch(records: readonly SQSRecord[], nowMs: number): void {
  captureColdStart();
  const ages: MetricEntry[] = [];
  for (const record of records) {
    const sentAt = Number(record.attributes?.SentTimestamp);
    if (Number.isFinite(sentAt))
      ages.push([QUEUE_JOB_AGE, MetricUnit.Milliseconds, Math.max(0, nowMs - sentAt)]);
  }
  publishFunctionMetrics(ages);
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
  for (const [outcome, count] of byOutcome)
    publishMetrics({ [WEBHOOK_DELIVERIES.dimension]: outcome }, [
      [WEBHOOK_DELIVERIES.name, MetricUnit.Count, count],
    ]);
  for (const { outcome, attempt, count } of byAttempt.values())
    publishMetrics(
      { [WEBHOOK_DELIVERIES.dimension]: outcome, [WEBHOOK_DELIVERY_ATTEMPTS.dimension]: String(attempt) },
      [[WEBHOOK_DELIVERY_ATTEMPTS.name, MetricUnit.Count, count]],
    );
}

/** One export (streamed or a PDF job): its rows when it has rows, and its bytes. */
export function publishExportMetrics(rows: number | undefined, bytes: number): void {
  const entries: MetricEntry[] = [[EXPORT_METRICS.bytes, MetricUnit.Bytes, bytes]];
  if (rows !== undefined) entries.push([EXPORT_METRICS.rows, MetricUnit.Count, rows]);
  publishFunctionMetrics(entries);
}

/** One e-mail accepted by SES. */
export function publishEmailSent(): void {
  publishFunctionMetrics([[EMAILS_SENT, MetricUnit.Count, 1]]);
}

/** Messages posted to Discord by one batch. */
export function publishDiscordPosts(count: number): void {
  if (count > 0) publishFunctionMetrics([[DISCORD_POSTS, MetricUnit.Count, count]]);
}

/** How long after their commit the search index received one batch's changes. */
export function publishSearchIndexLag(lagsMs: readonly number[]): void {
  publishFunctionMetrics(
    lagsMs.map((lag) => [SEARCH_METRICS.indexLag, MetricUnit.Milliseconds, lag] as const),
  );
}
