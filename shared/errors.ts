/**
 * The errors of the service, in domain terms: a code from the contract, a message for the
 * integrator, and the details that explain it. They know nothing of HTTP: the data layer, workers
 * and scripts throw them too; `shared/http/errors.ts` holds the one mapping to status codes and
 * headers, and the error formatter writes the envelope.
 */
export const errorCodes = [
  'BAD_REQUEST',
  'UNAUTHORIZED',
  'INTEGRATION_MODULE_REQUIRED',
  'FORBIDDEN',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'CONFLICT',
  'PRECONDITION_FAILED',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'VALIDATION_ERROR',
  'RATE_LIMITED',
  'INTERNAL_ERROR',
  'UPSTREAM_ERROR',
  'SERVICE_UNAVAILABLE',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

export type ErrorDetails = Record<string, unknown>;

export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails | undefined;
  /** Every offending input field and its message (validation errors). */
  readonly fields: Record<string, string> | undefined;
  /** How long a client should wait before trying again, when waiting helps. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: ErrorDetails; fields?: Record<string, string>; retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.details = options.details;
    this.fields = options.fields;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

export class BadRequestError extends ServiceError {
  constructor(message: string, details?: ErrorDetails) {
    super('BAD_REQUEST', message, { details });
  }
}

export class UnauthorizedError extends ServiceError {
  constructor(message = 'Authentication is missing or invalid') {
    super('UNAUTHORIZED', message);
  }
}

export class ModuleRequiredError extends ServiceError {
  constructor(module: string, feature: string) {
    super('INTEGRATION_MODULE_REQUIRED', `The organization needs the ${module} module for this feature`, {
      details: { module, feature },
    });
  }
}

export class ForbiddenError extends ServiceError {
  constructor(message = 'The credential is not allowed to do this', details?: ErrorDetails) {
    super('FORBIDDEN', message, { details });
  }
}

export class NotFoundError extends ServiceError {
  constructor(message = 'Resource not found', details?: ErrorDetails) {
    super('NOT_FOUND', message, { details });
  }
}

export class MethodNotAllowedError extends ServiceError {
  constructor(allowed: readonly string[]) {
    super('METHOD_NOT_ALLOWED', 'This path does not accept that method', { details: { allowed } });
  }
}

export class ConflictError extends ServiceError {
  constructor(message: string, details?: ErrorDetails) {
    super('CONFLICT', message, { details });
  }
}

export class PreconditionFailedError extends ServiceError {
  constructor(currentVersion: number) {
    super('PRECONDITION_FAILED', 'If-Match does not match the current version', {
      details: { currentVersion },
    });
  }
}

export class PayloadTooLargeError extends ServiceError {
  constructor(limitBytes: number) {
    super('PAYLOAD_TOO_LARGE', `The body exceeds ${limitBytes} bytes`, { details: { limitBytes } });
  }
}

export class UnsupportedMediaTypeError extends ServiceError {
  constructor() {
    super('UNSUPPORTED_MEDIA_TYPE', 'Send JSON bodies with Content-Type: application/json');
  }
}

export class ValidationError extends ServiceError {
  constructor(message: string, fields: Record<string, string>, details: ErrorDetails = {}) {
    const first = Object.keys(fields)[0];
    super('VALIDATION_ERROR', message, {
      fields,
      details: { ...(first ? { field: first } : {}), ...details },
    });
  }

  static field(field: string, message: string, details: ErrorDetails = {}): ValidationError {
    return new ValidationError(message, { [field]: message }, details);
  }
}

/** A limit's state as the `RateLimit-*` headers report it. */
export interface RateQuota {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

export class RateLimitedError extends ServiceError {
  /** The limit that refused, when it is not the credential's own (which the stack reports anyway). */
  readonly quota: RateQuota | undefined;

  constructor(
    retryAfterSeconds: number,
    options: { quota?: RateQuota; message?: string; details?: ErrorDetails } = {},
  ) {
    super('RATE_LIMITED', options.message ?? 'Too many requests', {
      details: { retryAfterSeconds, ...options.details },
      retryAfterSeconds,
    });
    this.quota = options.quota;
  }
}

export class UpstreamError extends ServiceError {
  constructor(message: string, details?: ErrorDetails) {
    super('UPSTREAM_ERROR', message, { details });
  }
}

export class ServiceUnavailableError extends ServiceError {
  constructor(message = 'The service is temporarily unavailable, retry shortly', retryAfterSeconds = 1) {
    super('SERVICE_UNAVAILABLE', message, { retryAfterSeconds });
  }
}
