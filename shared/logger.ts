import { Logger } from '@aws-lambda-powertools/logger';
import { METRICS_SERVICE } from './metrics-contract';

/**
 * The service's structured logger: Powertools Logger, one JSON line per entry. Configuration is
 * Powertools' own (the stack's `LogLevel` and `DebugLogSampleRate` parameters set
 * `POWERTOOLS_LOG_LEVEL` and `POWERTOOLS_LOGGER_SAMPLE_RATE`). Secrets are never logged:
 * credentials appear only as their id. What the saved queries and alarms read of these lines is
 * tested in test/infra/operations.checks.ts (the saved queries) and test/unit/request-metrics.test.ts
 * (the access line).
 */
export const logger = new Logger({ serviceName: METRICS_SERVICE });

/**
 * The start of a request or invocation: every line until the next one carries its id (and `orgId`
 * once known), and the DEBUG sample is drawn again. A Lambda instance serves one request at a time,
 * so the logger's keys are the current request's.
 */
export function beginRequest(requestId: string): void {
  logger.resetKeys();
  logger.appendKeys({ requestId });
  logger.refreshSampleRateCalculation();
}
