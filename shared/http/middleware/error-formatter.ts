import { ServiceError, ServiceUnavailableError } from '../../errors';
import { logger } from '../../logger';
import type { HttpMiddleware } from '../context';
import { exposes, headersOf, statusOfCode } from '../errors';
import { jsonResponse } from '../serialize';

/**
 * DynamoDB and SQS throttling, and a single write that met a transaction on its item, are the
 * client's cue to retry, not a server fault (the data layer retries them first: retryTransient).
 */
const THROTTLING = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TooManyRequestsException',
  'TransactionConflictException',
  'TransactionInProgressException',
]);

function toServiceError(error: unknown): ServiceError | undefined {
  if (error instanceof ServiceError) return error;
  if (error instanceof Error && THROTTLING.has(error.name)) return new ServiceUnavailableError();
  // Optimistic writes that kept losing to concurrent writers: transient, so retryable.
  if (error instanceof Error && error.name === 'ConcurrentChangeError') {
    return new ServiceUnavailableError('The resource is busy with concurrent changes, retry shortly');
  }
  return undefined;
}

/**
 * The one place an error envelope is written. Known errors keep their status, code, details and
 * fields; anything else is logged with the request id and leaves as a bare 500 with no internals.
 */
export const errorFormatter = (): HttpMiddleware => ({
  onError: (request) => {
    const { requestId } = request.context.state ?? { requestId: 'unknown' };
    const known = toServiceError(request.error);
    const expose = known !== undefined && exposes(known);
    if (!expose) {
      // Explicit ids: in the local stack several requests share the process (and the log context).
      const orgId = request.context.state?.organization?.id;
      const ids = { requestId, ...(orgId ? { orgId } : {}) };
      // Throttling and writes that kept losing are load, answered 503 with Retry-After: a warning
      // with its cause, not an error with a stack (those stay for what nobody expected).
      if (known?.code === 'SERVICE_UNAVAILABLE')
        logger.warn('request shed', { ...ids, cause: (request.error as Error).name ?? 'unknown' });
      // Another service failed (Discord, an AI provider): answered 502 with which one, not our fault.
      // Its details under a key of their own: `service` at the root is the log line's own key.
      else if (known?.code === 'UPSTREAM_ERROR')
        logger.warn('upstream failed', { ...ids, reason: known.message, upstream: known.details });
      else logger.error('request failed', { ...ids, error: request.error as Error });
    }
    const statusCode = known ? statusOfCode[known.code] : 500;
    const error = {
      code: known?.code ?? 'INTERNAL_ERROR',
      message: expose ? known.message : 'An internal error occurred',
      ...(known?.fields ? { fields: known.fields } : {}),
      ...(known?.details ? { details: known.details } : {}),
      correlationId: requestId,
    };
    request.response = jsonResponse(statusCode, { error }, known ? headersOf(known) : undefined);
  },
});
