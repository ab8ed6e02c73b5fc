import {
  COLD_START,
  FUNCTION_DIMENSION,
  METRICS_NAMESPACE,
  METRICS_SERVICE,
  REQUEST_METRICS,
  ROUTE_DIMENSION,
} from './metrics-contract';

/**
 * CloudWatch metrics as Embedded Metric Format lines on stdout: CloudWatch Logs extracts them, so
 * emitting one costs no API call and no latency. The names and dimensions live in
 * `metrics-contract.ts`, which the stack's alarms and dashboard read too.
 *
 * Dimensions stay low-cardinality (service, function, route, queue, outcome): a tenant's figures
 * belong in the access log, where Logs Insights can group by `orgId`.
 *
 * The lines are the documents Powertools Metrics 2.35 printed for the same calls, same rules and
 * limits (test/unit/emf-writer.test.ts compares the two), written here for the cold start: the
 * library was 12 KB of every bundle, and loading it with `new Metrics()` took about 5 ms bundled
 * alone, against under 0.5 ms for this module.
 */

/** CloudWatch's units, Powertools' `MetricUnit` (same keys and order: an invalid unit's error lists them). */
export const Unit = {
  Seconds: 'Seconds',
  Microseconds: 'Microseconds',
  Milliseconds: 'Milliseconds',
  Bytes: 'Bytes',
  Kilobytes: 'Kilobytes',
  Megabytes: 'Megabytes',
  Gigabytes: 'Gigabytes',
  Terabytes: 'Terabytes',
  Bits: 'Bits',
  Kilobits: 'Kilobits',
  Megabits: 'Megabits',
  Gigabits: 'Gigabits',
  Terabits: 'Terabits',
  Percent: 'Percent',
  Count: 'Count',
  BytesPerSecond: 'Bytes/Second',
  KilobytesPerSecond: 'Kilobytes/Second',
  MegabytesPerSecond: 'Megabytes/Second',
  GigabytesPerSecond: 'Gigabytes/Second',
  TerabytesPerSecond: 'Terabytes/Second',
  BitsPerSecond: 'Bits/Second',
  KilobitsPerSecond: 'Kilobits/Second',
  MegabitsPerSecond: 'Megabits/Second',
  GigabitsPerSecond: 'Gigabits/Second',
  TerabitsPerSecond: 'Terabits/Second',
  CountPerSecond: 'Count/Second',
  NoUnit: 'None',
} as const;
export type MetricUnit = (typeof Unit)[keyof typeof Unit];
export type MetricEntry = readonly [name: string, unit: MetricUnit, value: number];

const UNITS: readonly string[] = Object.values(Unit);

/**
 * EMF's limits, as Powertools enforces them: 100 metrics a document, 100 values a metric, and 30
 * dimensions a set, one of them `service` (Powertools rejects a set of more than 29 with `service`).
 */
const MAX_METRICS_PER_LINE = 100;
const MAX_VALUES_PER_METRIC = 100;
const MAX_DIMENSIONS = 29;
const MAX_NAME_LENGTH = 255;

/** Powertools' reading of a boolean variable (trimmed, any case); undefined when it is none. */
function flag(value: string): boolean | undefined {
  const word = value.trim().toLowerCase();
  if (['1', 'y', 'yes', 't', 'true', 'on'].includes(word)) return true;
  if (['0', 'n', 'no', 'f', 'false', 'off'].includes(word)) return false;
  return undefined;
}

/**
 * Powertools' rule: POWERTOOLS_METRICS_DISABLED when set (a value that is no boolean fails the
 * init, as `new Metrics()` did), otherwise POWERTOOLS_DEV (a value that is no boolean: not dev).
 */
function metricsDisabled(): boolean {
  const disabled = process.env.POWERTOOLS_METRICS_DISABLED;
  if (disabled === undefined) return flag(process.env.POWERTOOLS_DEV ?? '') === true;
  const off = flag(disabled);
  if (off === undefined)
    throw new Error('Environment variable POWERTOOLS_METRICS_DISABLED must be a boolean');
  return off;
}

/** Read once, at load, as Powertools did: nothing is built, nothing is printed. */
const off = metricsDisabled();

/** Only an on-demand instance reports its cold start (a provisioned one was initialized ahead). */
let coldStart = process.env.AWS_LAMBDA_INITIALIZATION_TYPE?.trim() === 'on-demand';

/** The endpoint group or worker this instance runs (CDK sets it per function); `local` elsewhere. */
export const functionName = process.env.SERVICE_FUNCTION || 'local';

/** `service` first, then the caller's, in order; an empty name or value is dropped with a warning. */
function dimensionValues(dimensions: Readonly<Record<string, string>>): Record<string, string> {
  const values: Record<string, string> = { service: METRICS_SERVICE };
  for (const name in dimensions) {
    const value = dimensions[name];
    if (name.trim() === '' || typeof value !== 'string' || value.trim() === '') {
      process.stderr.write(
        `The dimension ${name} doesn't meet the requirements and won't be added. Ensure the dimension name and value are non empty strings\n`,
      );
      continue;
    }
    values[name] = value;
    if (Object.keys(values).length > MAX_DIMENSIONS)
      throw new RangeError(`The number of metric dimensions must be lower than ${MAX_DIMENSIONS}`);
  }
  return values;
}

interface Metric {
  unit: MetricUnit;
  values: number[];
}

function checkMetric(name: string, unit: string, value: number): void {
  if (typeof name !== 'string') throw new Error(`${name} is not a valid string`);
  if (name.length < 1 || name.length > MAX_NAME_LENGTH)
    throw new RangeError(`The metric name should be between 1 and ${MAX_NAME_LENGTH} characters`);
  if (typeof value !== 'number') throw new RangeError(`${value} is not a valid number`);
  if (!UNITS.includes(unit))
    throw new RangeError(`Invalid metric unit '${unit}', expected either option: ${UNITS.join(',')}`);
}

/** The entries by name, in order of first appearance: a name given twice is one metric, its values an array. */
function metricsByName(
  entries: readonly MetricEntry[],
  dimensions: Readonly<Record<string, string>>,
): [string, Metric][] {
  const metrics = new Map<string, Metric>();
  for (const [name, unit, value] of entries) {
    checkMetric(name, unit, value);
    const metric = metrics.get(name);
    if (metric === undefined) metrics.set(name, { unit, values: [value] });
    else if (metric.unit === unit) metric.values.push(value);
    else
      throw new Error(
        `Metric "${name}" has already been added with unit "${metric.unit}", but we received unit "${unit}". Did you mean to use metric unit "${metric.unit}"?`,
      );
  }
  for (const name of metrics.keys())
    if (Object.hasOwn(dimensions, name))
      throw new Error(
        `EMF key collision on "${name}": registered as both a metric (number) and a ${name === 'service' ? 'default dimension' : 'dimension'} (string)`,
      );
  return [...metrics];
}

/**
 * The metrics cut into documents within EMF's limits. Powertools cut at the same limits, but its
 * later lines lost the caller's dimensions (its flush cleared them), landing under `service` alone,
 * a metric nothing reads: here every line keeps them.
 */
function* withinLimits(metrics: [string, Metric][]): Generator<[string, Metric][]> {
  let pending = metrics;
  while (pending.length > 0) {
    const line = pending.slice(0, MAX_METRICS_PER_LINE);
    const rest = line
      .filter(([, metric]) => metric.values.length > MAX_VALUES_PER_METRIC)
      .map(([name, { unit, values }]): [string, Metric] => [
        name,
        { unit, values: values.slice(MAX_VALUES_PER_METRIC) },
      ]);
    pending = [...rest, ...pending.slice(MAX_METRICS_PER_LINE)];
    yield line.map(([name, { unit, values }]) => [
      name,
      { unit, values: values.slice(0, MAX_VALUES_PER_METRIC) },
    ]);
  }
}

/** Powertools' document: the directive, the dimension values, then the metric values (one, or an array). */
function writeDocument(dimensions: Readonly<Record<string, string>>, metrics: [string, Metric][]): void {
  const values: Record<string, number | number[]> = {};
  for (const [name, metric] of metrics)
    values[name] = metric.values.length === 1 ? (metric.values[0] as number) : metric.values;
  const document = {
    _aws: {
      Timestamp: Date.now(),
      CloudWatchMetrics: [
        {
          Namespace: METRICS_NAMESPACE,
          Dimensions: [Object.keys(dimensions)],
          Metrics: metrics.map(([name, metric]) => ({ Name: name, Unit: metric.unit })),
        },
      ],
    },
    ...dimensions,
    ...values,
  };
  process.stdout.write(`${JSON.stringify(document)}\n`);
}

/**
 * Metrics that share one dimension set, published at once as one EMF line. Everything is checked
 * before anything is printed: a bad entry throws and publishes none.
 */
export function publishMetrics(
  dimensions: Readonly<Record<string, string>>,
  entries: readonly MetricEntry[],
): void {
  if (entries.length === 0 || off) return;
  const values = dimensionValues(dimensions);
  for (const line of withinLimits(metricsByName(entries, values))) writeDocument(values, line);
}

/** Per-function figures (exports, e-mails, Discord posts): dimensions `service` + `function`. */
export function publishFunctionMetrics(entries: readonly MetricEntry[]): void {
  publishMetrics({ [FUNCTION_DIMENSION]: functionName }, entries);
}

/** `ColdStart` once per instance, on its first invocation, as Powertools printed it. */
export function captureColdStart(): void {
  if (off || !coldStart) return;
  coldStart = false;
  const name = functionName.trim();
  publishMetrics(name === '' ? {} : { [COLD_START.dimension]: name }, [[COLD_START.name, Unit.Count, 1]]);
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
  { Name: REQUEST_METRICS.latency, Unit: Unit.Milliseconds },
  ...[
    REQUEST_METRICS.requests,
    REQUEST_METRICS.status2xx,
    REQUEST_METRICS.status4xx,
    REQUEST_METRICS.status5xx,
    REQUEST_METRICS.conflicts,
    REQUEST_METRICS.dynamoDbRetries,
    REQUEST_METRICS.dynamoDbThrottles,
  ].map((name) => ({ Name: name, Unit: Unit.Count })),
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
  if (off) return;
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
  if (off) return undefined;
  return `"_aws":{"Timestamp":${Date.now()}${requestTemplate(route).directive},${requestValues(figures)}`;
}
