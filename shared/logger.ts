import { Logger } from '@aws-lambda-powertools/logger';

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
const powertools = new Logger({ serviceName: 'conversation-service' });

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
  warn(message: string, attributes: Attributes = {}): void {
    powertools.warn(message, { ...current, ...attributes });
  },
  error(message: string, attributes: Attributes = {}): void {
    powertools.error(message, { ...current, ...attributes });
  },
};
