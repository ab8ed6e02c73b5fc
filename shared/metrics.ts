import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import {
  FUNCTION_DIMENSION,
  METRICS_NAMESPACE,
  METRICS_SERVICE,
  REQUEST_METRICS,
  ROUTE_DIMENSION,
} from './metrics-contract';

/**
 * CloudWatch metrics as Embedded Metric Format lines on stdout (Powertools Metrics): CloudWatch
 * Logs extracts them, so emitting one costs no API call and no latency. The names and dimensions
 * live in `metrics-contract.ts`, which the stack's alarms and dashboard read too.
 *
 * Dimensions stay low-cardinality (service, function, route, queue, outcome): a tenant's figures
 * belong in the access log, where Logs Insights can group by `orgId`.
 */
class ServiceMetrics extends Metrics {
  /** POWERTOOLS_METRICS_DISABLED (or POWERTOOLS_DEV): nothing is built, nothing is printed. */
  get off(): boolean {
    return this.isDisabled();
  }
}
const metrics = new ServiceMetrics({ namespace: METRICS_NAMESPACE, serviceName: METRICS_SERVICE });

/** The endpoint group or worker this instance runs (CDK sets it per function); `local` elsewhere. */
export const functionName = process.env.SERVICE_FUNCTION || 'local';

export const Unit = MetricUnit;
export type MetricEntry = readonly [
  name: string,
  unit: (typeof MetricUnit)[keyof typeof MetricUnit],
  value: number,
];

/** Metrics that share one dimension set, published at once as one EMF line. */
export function publishMetrics(
  dimensions: Readonly<Record<string, string>>,
  entries: readonly MetricEntry[],
): void {
  if (entries.length === 0 || metrics.off) return;
  for (const name in dimensions) metrics.addDimension(name, dimensions[name] as string);
  for (const [name, unit, value] of entries) metrics.addMetric(name, unit, value);
  metrics.publishStoredMetrics();
}

/** Per-function figures (exports, e-mails, Discord posts): dimensions `service` + `function`. */
export function publishFunctionMetrics(entries: readonly MetricEntry[]): void {
  publishMetrics({ [FUNCTION_DIMENSION]: functionName }, entries);
}

/** `ColdStart` once per instance, on its first invocation (Powertools keeps the flag). */
export function captureColdStart(): void {
  if (!metrics.off) metrics.captureColdStartMetric(functionName);
}

/** The figures of one API request (counts are 0 or 1 except the DynamoDB ones). */
export interface RequestFigures {
  latencyMs: number;
  status2xx: number;
  status4xx: number;
  status5xx: number;
  conflicts: number;
  dynamoDbRetries: number;
  dynamoDbThrottles: number;
}

/**
 * Per route, built once: the metric directive (from after the timestamp to the end of `_aws`), and
 * the standalone line's, followed by its dimensions.
 */
const requestTemplates = new Map<string, { directive: string; withDimensions: string }>();
const REQUEST_DIRECTIVE_METRICS = JSON.stringify([
  { Name: REQUEST_METRICS.latency, Unit: MetricUnit.Milliseconds },
  ...[
    REQUEST_METRICS.requests,
    REQUEST_METRICS.status2xx,
    REQUEST_METRICS.status4xx,
    REQUEST_METRICS.status5xx,
    REQUEST_METRICS.conflicts,
    REQUEST_METRICS.dynamoDbRetries,
    REQUEST_METRICS.dynamoDbThrottles,
  ].map((name) => ({ Name: name, Unit: MetricUnit.Count })),
]);

function requestTemplate(route: string): { directive: string; withDimensions: string } {
  let template = requestTemplates.get(route);
  if (template === undefined) {
    const metricsDirective = JSON.stringify([
      { Namespace: METRICS_NAMESPACE, Dimensions: [['service', ROUTE_DIMENSION]], Metrics: 'METRICS' },
    ]).replace('"METRICS"', REQUEST_DIRECTIVE_METRICS);
    const directive = `,"CloudWatchMetrics":${metricsDirective}}`;
    template = {
      directive,
      withDimensions: `${directive},"service":${JSON.stringify(METRICS_SERVICE)},"${ROUTE_DIMENSION}":${JSON.stringify(route)}`,
    };
    requestTemplates.set(route, template);
  }
  return template;
}

const requestValues = (figures: RequestFigures): string =>
  `"${REQUEST_METRICS.latency}":${figures.latencyMs},"${REQUEST_METRICS.requests}":1,"${REQUEST_METRICS.status2xx}":${figures.status2xx},"${REQUEST_METRICS.status4xx}":${figures.status4xx},"${REQUEST_METRICS.status5xx}":${figures.status5xx},"${REQUEST_METRICS.conflicts}":${figures.conflicts},"${REQUEST_METRICS.dynamoDbRetries}":${figures.dynamoDbRetries},"${REQUEST_METRICS.dynamoDbThrottles}":${figures.dynamoDbThrottles}`;

/**
 * The one EMF line of an API request, dimensions `service` + `route`. The same document Powertools
 * would print for these metrics (a unit test compares the two), assembled from a per-route template:
 * Powertools' per-call validation and serialization measured about 11 µs a request, more than the
 * rest of the warm request path (see `npm run bench`), and this line runs on every request. When
 * the access line is written (INFO), the metrics ride on it instead (`requestMetricsMembers`).
 */
export function publishRequestMetrics(route: string, figures: RequestFigures): void {
  if (metrics.off) return;
  process.stdout.write(
    `{"_aws":{"Timestamp":${Date.now()}${requestTemplate(route).withDimensions},${requestValues(figures)}}\n`,
  );
}

/**
 * The same metrics as members of another JSON line that already holds the dimensions at its root
 * (`service` = METRICS_SERVICE and `route`): the access line. CloudWatch extracts EMF from any JSON
 * log line, so a request writes one line, not two. Undefined when metrics are off.
 */
export function requestMetricsMembers(route: string, figures: RequestFigures): string | undefined {
  if (metrics.off) return undefined;
  return `"_aws":{"Timestamp":${Date.now()}${requestTemplate(route).directive},${requestValues(figures)}`;
}
