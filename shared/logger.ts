import { Logger } from '@aws-lambda-powertools/logger';

/**
 * The service's structured logger (Powertools), behind a thin wrapper that stamps every line with
 * the current request id and organization. A Lambda instance serves one request at a time, so the
 * current request is simply module state; Powertools' own per-request keys (appendKeys/resetKeys)
 * read the environment several times per call and cost more than the rest of the warm path.
 * Secrets are never logged: credentials appear only as their id.
 */
const powertools = new Logger({ serviceName: 'conversation-service' });

/** Powertools' INFO threshold; the level is fixed at cold start (POWERTOOLS_LOG_LEVEL). */
const INFO = 12;
const infoEnabled = powertools.level <= INFO;

const current: { requestId?: string; orgId?: string } = {};

type Attributes = Record<string, unknown>;

export const log = {
  beginRequest(requestId: string): void {
    current.requestId = requestId;
    current.orgId = undefined;
  },
  setOrganization(orgId: string): void {
    current.orgId = orgId;
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
