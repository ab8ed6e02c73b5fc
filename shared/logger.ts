import { randomInt } from 'node:crypto';
import { METRICS_SERVICE } from './metrics-contract';

/**
 * The service's structured logger: one JSON line per entry, stamped with the current request id and
 * organization. A Lambda instance serves one request at a time, so the current request is simply
 * module state. Secrets are never logged: credentials appear only as their id.
 *
 * The lines are those Powertools Logger 2.35 printed for the same calls (same keys and order, levels,
 * streams, error and value serialization, level and sampling rules; test/unit/logger-equivalence.test.ts
 * compares the two), written here for the cold start: the library (with its commons and invoke
 * store) was about 19 KB of the minified webhooks bundle (148 → 129 KB), and importing it bundled
 * alone took about 3.3 ms against 1.3 ms for this module (an empty module: 0.8 ms; SDK and
 * node:crypto already loaded, as in every function).
 *
 * Configuration (the stack's `LogLevel` and `DebugLogSampleRate` parameters set these), read once at
 * load as Powertools did:
 * - `POWERTOOLS_LOG_LEVEL` (else `LOG_LEVEL`): TRACE, DEBUG, INFO (the access lines), WARN, ERROR,
 *   CRITICAL, SILENT, as written (a lowercase or unknown name means INFO). Lambda's Advanced Logging
 *   Controls level (`AWS_LAMBDA_LOG_LEVEL`) wins over both when it is set;
 * - `POWERTOOLS_LOGGER_SAMPLE_RATE` (0–1): the share of requests logged at DEBUG whatever the
 *   level, drawn again for every request, so a trace of a few requests is always at hand;
 * - `POWERTOOLS_DEV`: lines indented, through the global console; `TZ` other than UTC: timestamps
 *   with that zone's offset.
 */
const SERVICE = METRICS_SERVICE;
const SERVICE_JSON = JSON.stringify(SERVICE);

type Attributes = Record<string, unknown>;

/** Powertools' reading of a variable: trimmed, '' when unset. */
const setting = (name: string): string => process.env[name]?.trim() ?? '';

/** Powertools' thresholds; a name is valid when it is `in` this object, as Powertools checks it (case and all). */
const LEVELS = {
  TRACE: 6,
  DEBUG: 8,
  INFO: 12,
  WARN: 16,
  ERROR: 20,
  CRITICAL: 24,
  SILENT: 28,
} as const;
const { TRACE, DEBUG, INFO, WARN, ERROR } = LEVELS;
/** Powertools' test, `in` (so a name inherited from Object.prototype passes too, as it did there). */
const isLevel = (name: string): name is keyof typeof LEVELS => name in LEVELS;
/** The level's name in the line, and the console method Powertools printed it with. */
const NAMES: Record<number, [name: string, method: 'debug' | 'info' | 'warn' | 'error']> = {
  [DEBUG]: ['DEBUG', 'debug'],
  [INFO]: ['INFO', 'info'],
  [WARN]: ['WARN', 'warn'],
  [ERROR]: ['ERROR', 'error'],
};

/** `POWERTOOLS_DEV` as a boolean (1, y, yes, t, true, on, any case); anything else is not dev. */
const DEV = ['1', 'y', 'yes', 't', 'true', 'on'].includes(setting('POWERTOOLS_DEV').toLowerCase());
const TZ = setting('TZ');
const LOCAL_TIME = TZ !== '' && !TZ.includes('UTC');

/** Lambda's Advanced Logging Controls level (FATAL is Powertools' CRITICAL): it overrides ours. */
const alcName = setting('AWS_LAMBDA_LOG_LEVEL') === 'FATAL' ? 'CRITICAL' : setting('AWS_LAMBDA_LOG_LEVEL');
const ALC = isLevel(alcName) ? alcName : undefined;

// `new Logger()` failed on a POWERTOOLS_LOGGER_LOG_EVENT that is no boolean: so does this load.
const logEvent = process.env.POWERTOOLS_LOGGER_LOG_EVENT?.trim().toLowerCase();
if (logEvent !== undefined && logEvent !== 'true' && logEvent !== 'false')
  throw new Error('Environment variable POWERTOOLS_LOGGER_LOG_EVENT must be a boolean');

const configured = setting('POWERTOOLS_LOG_LEVEL') || setting('LOG_LEVEL');
/** The level requests go back to when not sampled. */
const INITIAL = (ALC !== undefined ? LEVELS[ALC] : isLevel(configured) ? LEVELS[configured] : INFO) as number;
let level = INITIAL;

const rate = Number(process.env.POWERTOOLS_LOGGER_SAMPLE_RATE?.trim() ?? 0);
if (Number.isNaN(rate))
  throw new TypeError('Environment variable POWERTOOLS_LOGGER_SAMPLE_RATE must be a number');
/** Powertools' `sampling_rate`: the configured rate when valid (0–1), else 0 (no sampling). */
const SAMPLE_RATE = rate >= 0 && rate <= 1 ? rate : 0;

let infoEnabled = level <= INFO;
let debugEnabled = level <= DEBUG;
let alcWarned = false;

/**
 * Powertools' draw (at load, then per request after the first): DEBUG for this request when
 * randomInt(0, 100) / 100 ≤ the rate, else back to the initial level. Under Advanced Logging Controls
 * the level stays ALC's, with a warning the first time it is stricter than the DEBUG drawn.
 */
function drawSample(): void {
  if (SAMPLE_RATE && randomInt(0, 100) / 100 <= SAMPLE_RATE && level > TRACE) {
    level = ALC !== undefined ? INITIAL : DEBUG;
    updateFlags();
    if (level > DEBUG && !alcWarned) {
      alcWarned = true;
      write(
        WARN,
        `Current log level (DEBUG) does not match AWS Lambda Advanced Logging Controls minimum log level (${ALC}). This can lead to data loss, consider adjusting them.`,
      );
    }
    write(DEBUG, 'Setting log level to DEBUG due to sampling rate');
  } else {
    level = INITIAL;
    updateFlags();
  }
}

function updateFlags(): void {
  infoEnabled = level <= INFO;
  debugEnabled = level <= DEBUG;
}

/** Powertools' X-Ray trace id: `Root=` of the invocation's trace header. */
function traceId(): string | undefined {
  const store = (globalThis as { awslambda?: { InvokeStore?: { getXRayTraceId(): string | undefined } } })
    .awslambda?.InvokeStore;
  const header = store?.getXRayTraceId() ?? setting('_X_AMZN_TRACE_ID');
  if (header === '') return undefined;
  if (!header.includes('=')) return header;
  let root: string | undefined;
  for (const field of header.split(';')) {
    const [key, value] = field.split('=');
    if (key === 'Root') root = value;
  }
  return root;
}

/** Powertools drops base-level values that are undefined, null or ''. */
const present = (value: unknown): boolean => value !== undefined && value !== null && value !== '';

let zone: { format: Intl.DateTimeFormat; resolved: boolean } | undefined;

/** Powertools' timestamp under a TZ other than UTC: local time and offset (its arithmetic, as is). */
function localTimestamp(date: Date): string {
  if (!zone) {
    const options = { hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit' } as const;
    const time = { hour: '2-digit', minute: '2-digit', second: '2-digit' } as const;
    try {
      zone = { format: new Intl.DateTimeFormat('en', { ...options, ...time, timeZone: TZ }), resolved: true };
    } catch {
      console.warn(`Invalid or unresolvable time zone: "${TZ}" - falling back to UTC.`);
      zone = {
        format: new Intl.DateTimeFormat('en', { ...options, ...time, timeZone: 'UTC' }),
        resolved: false,
      };
    }
  }
  const parts: Record<string, string> = {};
  for (const part of zone.format.formatToParts(date)) parts[part.type] = part.value;
  const offset = zone.resolved ? -date.getTimezoneOffset() : 0;
  const hours = Math.abs(Math.floor(offset / 60))
    .toString()
    .padStart(2, '0');
  const minutes = Math.abs(offset % 60)
    .toString()
    .padStart(2, '0');
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}.${date
    .getMilliseconds()
    .toString()
    .padStart(3, '0')}${offset >= 0 ? '+' : '-'}${hours}:${minutes}`;
}

const timestamp = (date: Date): string => (LOCAL_TIME ? localTimestamp(date) : date.toISOString());

function isPlain(value: unknown): value is Attributes {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
const copied = (value: unknown): value is Attributes | unknown[] => isPlain(value) || Array.isArray(value);

/**
 * Powertools' merge of the attributes into the line (its deepMerge): plain objects and arrays are
 * copied, a reference back to one of their ancestors is left out (so an array ends before it), and
 * `__proto__` and `constructor` keys are skipped. Other objects are kept as they are.
 */
function copy(value: Attributes | unknown[], ancestors: unknown[]): unknown {
  ancestors.push(value);
  const out: Attributes | unknown[] = Array.isArray(value) ? [] : {};
  for (const key of Array.isArray(value) ? value.keys() : Object.keys(value)) {
    if (key === '__proto__' || key === 'constructor') continue;
    const item = (value as Attributes)[key];
    if (!copied(item)) (out as Attributes)[key] = item;
    else if (!ancestors.includes(item)) (out as Attributes)[key] = copy(item, ancestors);
  }
  ancestors.pop();
  return out;
}

/** Powertools' error: name, location (the first `(file:line:column)` of the stack), message, stack, cause. */
function formatError(error: Error): Attributes {
  const { name, message, stack, cause, ...rest } = error as Error & Attributes;
  let location = '';
  for (const frame of error.stack?.split('\n') ?? []) {
    const match = /\(([^()]*?):(\d+?):(\d+?)\)\\?$/.exec(frame);
    if (match) {
      location = `${match[1]}:${Number(match[2])}`;
      break;
    }
  }
  const formatted: Attributes = {
    name,
    location,
    message,
    stack: DEV && typeof stack === 'string' ? stack.split('\n') : stack,
    cause: cause instanceof Error ? formatError(cause) : cause,
  };
  for (const key in error)
    if (!['name', 'message', 'stack', 'cause'].includes(key)) formatted[key] = rest[key];
  return formatted;
}

/** Powertools' JSON replacer: errors formatted, BigInt as a string, a value within itself left out. */
function replacer(): (this: unknown, key: string, value: unknown) => unknown {
  const ancestors: unknown[] = [];
  return function (this: unknown, _key, value) {
    const replaced = value instanceof Error ? formatError(value) : value;
    if (typeof replaced === 'bigint') return replaced.toString();
    if (typeof replaced === 'object' && replaced !== null) {
      while (ancestors.length > 0 && ancestors.at(-1) !== this) ancestors.pop();
      if (ancestors.includes(replaced)) return undefined;
      ancestors.push(replaced);
    }
    return replaced;
  };
}

/** WARN and ERROR went to stderr (Powertools' own Console), the rest to stdout; in dev, the console's. */
function print(threshold: number, line: string): void {
  if (DEV) console[NAMES[threshold]?.[1] ?? 'error'](line);
  else (threshold >= WARN ? process.stderr : process.stdout).write(`${line}\n`);
}

/** Powertools' line for `logger.<level>(message, fields)`, step for step. */
function write(threshold: number, message: string, fields: Attributes = {}): void {
  if (!(threshold >= level)) return;
  const now = new Date();
  const line: Attributes = {
    level: NAMES[threshold]?.[0],
    message,
    timestamp: '',
    service: SERVICE,
    // Keys of Powertools' Lambda context (unused here): an attribute of that name takes their place.
    cold_start: undefined,
    function_arn: undefined,
    function_memory_size: undefined,
    function_name: undefined,
    function_request_id: undefined,
    sampling_rate: SAMPLE_RATE,
    xray_trace_id: traceId(),
    tenant_id: undefined,
  };
  for (const key of Object.keys(fields)) {
    if (['level', 'message', 'sampling_rate', 'service', 'timestamp'].includes(key)) {
      write(WARN, `The key "${key}" is a reserved key and will be dropped.`);
      continue;
    }
    if (key === '__proto__' || key === 'constructor') continue;
    const value = fields[key];
    if (copied(value)) line[key] = copy(value, []);
    else if (value !== undefined || line[key] === undefined) line[key] = value;
  }
  line.timestamp = timestamp(now);
  for (const key in line) if (!present(line[key])) delete line[key];
  print(threshold, JSON.stringify(line, replacer(), DEV ? 4 : 0));
}

/** The access line's own keys must not be any of these for its template to hold. */
const BASE_KEYS = new Set([
  ...['level', 'message', 'timestamp', 'service', 'sampling_rate', 'xray_trace_id', 'requestId', 'orgId'],
  ...['cold_start', 'function_arn', 'function_memory_size', 'function_name', 'function_request_id'],
  ...['tenant_id', '__proto__', 'constructor'],
]);
/** The template holds for named keys with numbers, booleans, non-empty strings or nothing as values. */
function templated(message: string, own: Attributes): boolean {
  if (DEV || LOCAL_TIME || message === '') return false;
  for (const key in own) {
    const value = own[key];
    if (BASE_KEYS.has(key) || key.charCodeAt(0) <= 57) return false; // an index key would lead the line
    const type = typeof value;
    if (
      !(
        type === 'undefined' ||
        type === 'number' ||
        type === 'boolean' ||
        (type === 'string' && value !== '')
      )
    )
      return false;
  }
  return true;
}

const current: { requestId?: string; orgId?: string } = {};

// Powertools drew the first request's sample at construction, and printed what it had to say then.
drawSample();
let refreshed = false;

export const log = {
  beginRequest(requestId: string): void {
    current.requestId = requestId;
    current.orgId = undefined;
    // Powertools' refreshSampleRateCalculation: the first request keeps the draw made at load.
    if (SAMPLE_RATE) {
      if (refreshed) drawSample();
      refreshed = true;
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
    if (debugEnabled) write(DEBUG, message, { ...current, ...attributes() });
  },
  /** Skips building the line at all when INFO is off. */
  info(message: string, attributes: () => Attributes): void {
    if (infoEnabled) write(INFO, message, { ...current, ...attributes() });
  },
  /**
   * An INFO line with `members` (further JSON members, serialized) at its root: the line `info`
   * prints for `own` and those members. Written from a template when it holds (the access line, on
   * every request: through the general path's merge and replacer a line costs several µs more).
   * Callers check `infoEnabled` before building its input.
   */
  infoWith(message: string, own: Attributes, more: string | undefined): void {
    if (!infoEnabled) return;
    if (!templated(message, own)) {
      const fields = { ...current, ...own };
      write(INFO, message, more ? { ...fields, ...JSON.parse(`{${more}}`) } : fields);
      return;
    }
    // The base keys, then the request's, then the caller's: the order of Powertools' merge.
    const trace = traceId();
    let line = `{"level":"INFO","message":${JSON.stringify(message)},"timestamp":"${new Date().toISOString()}","service":${SERVICE_JSON},"sampling_rate":${SAMPLE_RATE}`;
    if (present(trace)) line += `,"xray_trace_id":${JSON.stringify(trace)}`;
    if (present(current.requestId)) line += `,"requestId":${JSON.stringify(current.requestId)}`;
    if (present(current.orgId)) line += `,"orgId":${JSON.stringify(current.orgId)}`;
    const rest = JSON.stringify(own);
    if (rest.length > 2) line += `,${rest.slice(1, -1)}`;
    if (more) line += `,${more}`;
    process.stdout.write(`${line}}\n`);
  },
  warn(message: string, attributes: Attributes = {}): void {
    write(WARN, message, { ...current, ...attributes });
  },
  error(message: string, attributes: Attributes = {}): void {
    write(ERROR, message, { ...current, ...attributes });
  },
};
