import { type ErrorCode, RateLimitedError, type RateQuota, type ServiceError } from '../errors';

/** The one mapping from the service's error codes to HTTP statuses. */
export const statusOfCode: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  INTEGRATION_MODULE_REQUIRED: 402,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_ERROR: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  UPSTREAM_ERROR: 502,
  SERVICE_UNAVAILABLE: 503,
};

/** Client errors explain themselves; server errors never leak their message. */
export const exposes = (error: ServiceError): boolean => statusOfCode[error.code] < 500;

/** `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` of one limit. */
export function rateLimitHeaders(quota: RateQuota): Record<string, string> {
  return {
    'RateLimit-Limit': String(quota.limit),
    'RateLimit-Remaining': String(quota.remaining),
    'RateLimit-Reset': String(quota.resetSeconds),
  };
}

/**
 * The headers HTTP defines for some errors: `Retry-After`, `Allow`, `WWW-Authenticate`, and the
 * `RateLimit-*` headers of a limit other than the credential's that refused the request.
 */
export function headersOf(error: ServiceError): Record<string, string> {
  const headers: Record<string, string> =
    error instanceof RateLimitedError && error.quota ? rateLimitHeaders(error.quota) : {};
  if (error.retryAfterSeconds !== undefined) headers['Retry-After'] = String(error.retryAfterSeconds);
  if (error.code === 'UNAUTHORIZED') headers['WWW-Authenticate'] = 'Bearer';
  const allowed = error.details?.allowed;
  if (error.code === 'METHOD_NOT_ALLOWED' && Array.isArray(allowed)) headers.Allow = allowed.join(', ');
  return headers;
}
