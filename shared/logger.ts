import { getXRayTraceIdFromEnv } from '@aws-lambda-powertools/commons/utils/env';
import { Logger } from '@aws-lambda-powertools/logger';
import { METRICS_SERVICE } from './metrics-contract';

/**
 * The service's structured logger (Powertools), behind a thin wrapper that stamps every line with
 * the current request id and organization. A Lambda instance serves one request at a time, so the
 * current request is simply module state; Powertools' own per-request keys (appendKeys/resetKeys)
 * read the environment several times per call and cost more than the rest of the warm path.
 * Secrets are never logged: credentials appear only as their id.
 *
 * Configuration (the stack's `LogLevel` and `DebugLogSampleRate` parameters set these):
 * - `POWERTOOLS_LOG_LEVEL`: DEBUG, INFO (the access lines), WARN, ERROR, SILENT;
 * - `POWERTOOLS_LOGGER_SAMPLE_RATE` (0–1): the share of requests logged at DEBUG whatever the
 *   level, drawn again for every request, so a trace of a few requests is always at hand.
 */
const SERVICE = METRICS_SERVICE;
const powertools = new Logger({ serviceName: SERVICE });

/** Powertools' `sampling_rate`: the configured rate when valid (0–1), else 0. */
const SAMPLE_RATE = (() => {
  const rate = Number(process.env.POWERTOOLS_LOGGER_SAMPLE_RATE ?? 0);
  return rate >= 0 && rate <= 1 ? rate : 0;
})();
/**
 * Powertools prints one-line JSON with UTC timestamps unless POWERTOOLS_DEV (indented) or a TZ other
 * than UTC (offset timestamps) is set: only then does the access line go through Powertools itself.
 */
const SERVICE_JSON = JSON.stringify(SERVICE);
/** Keys a line's own attributes must not repeat for the template to hold (Powertools would merge them). */
const BASE_KEYS = [
  'level',
  'message',
  'timestamp',
  'service',
  'sampling_rate',
  'xray_trace_id',
  'requestId',
  'orgId',
];
const overlapsBase = (attributes: Attributes): boolean => BASE_KEYS.some((key) => key in attributes);
const PLAIN_FORMAT = !process.env.POWERTOOLS_DEV && (!process.env.TZ || process.env.TZ.includes('UTC'));

/** Powertools' thresholds. */
const DEBUG = 8;
const INFO = 12;
const sampling = Number(process.env.POWERTOOLS_LOGGER_SAMPLE_RATE ?? 0) > 0;

let infoEnabled = powertools.level <= INFO;
let debugEnabled = powertools.level <= DEBUG;

const current: { requestId?: string; orgId?: string } = {};

type Attributes = Record<string, unknown>;

export const log = {
  beginRequest(requestId: string): void {
    current.requestId = requestId;
    current.orgId = undefined;
    if (sampling) {
      // Powertools draws again (DEBUG for this request, or back to the configured level).
      powertools.refreshSampleRateCalculation();
      infoEnabled = powertools.level <= INFO;
      debugEnabled = powertools.level <= DEBUG;
    }
  },
  setOrganization(orgId: string): void {
    current.orgId = orgId;
  },
  /** Whether INFO lines (the access line) are written for the current request. */
  get infoEnabled(): boolean {
    return infoEnabled;
  },
  /** Whether DEBUG lines are written for the current request (configured level or sampled). */
  get debugEnabled(): boolean {
    return debugEnabled;
  },
  /** Builds the line only when DEBUG is on for this request. */
  debug(message: string, attributes: () => Attributes): void {
    if (debugEnabled) powertools.debug(message, { ...current, ...attributes() });
  },
  /** Skips building the line at all when INFO is off. */
  info(message: string, attributes: () => Attributes): void {
    if (infoEnabled) powertools.info(message, { ...current, ...attributes() });
  },
  /**
   * An INFO line with `members` (further JSON members, serialized) at its root: the document
   * Powertools prints for `info(message, attributes)` plus those members (a unit test compares the
   * two). Built here because the access line is written on every request, and through Powertools it
   * cost about 20 µs (a JSON replacer, environment reads and Console formatting on every line): more
   * than the rest of the warm request path. Callers check `infoEnabled` before building its input.
   */
  infoWith(message: string, own: Attributes, more: string | undefined): void {
    if (!infoEnabled) return;
    if (!PLAIN_FORMAT || overlapsBase(own)) {
      const fields = { ...current, ...own };
      powertools.info(message, more ? { ...fields, ...JSON.parse(`{${more}}`) } : fields);
      return;
    }
    // Powertools' base keys, then the request's, then the caller's: the order its merge gives.
    const trace = getXRayTraceIdFromEnv();
    let line = `{"level":"INFO","message":${JSON.stringify(message)},"timestamp":"${new Date().toISOString()}","service":${SERVICE_JSON},"sampling_rate":${SAMPLE_RATE}`;
    if (trace !== undefined) line += `,"xray_trace_id":${JSON.stringify(trace)}`;
    if (current.requestId !== undefined) line += `,"requestId":${JSON.stringify(current.requestId)}`;
    if (current.orgId !== undefined) line += `,"orgId":${JSON.stringify(current.orgId)}`;
    const rest = JSON.stringify(own);
    if (rest.length > 2) line += `,${rest.slice(1, -1)}`;
    if (more) line += `,${more}`;
    process.stdout.write(`${line}}\n`);
  },
  warn(message: string, attributes: Attributes = {}): void {
    powertools.warn(message, { ...current, ...attributes });
  },
  error(message: string, attributes: Attributes = {}): void {
    powertools.error(message, { ...current, ...attributes });
  },
};
