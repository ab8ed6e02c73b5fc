/**
 * The errors of the service, in domain terms: a code from the contract, a message for the
 * integrator, and the details that explain it. They know nothing of HTTP: the data layer, workers
 * and scripts throw them too; `shared/http/errors.ts` holds the one mapping to status codes and
 * headers, and the error formatter writes the envelope.
 */
import type { output } from 'zod/v4/core';
import type { ErrorDetailsSchemas } from './schemas/error-details';

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

/** Details as read back (the formatter, logs): whatever the code's schema allows. */
export type ErrorDetails = Record<string, unknown>;

/**
 * The details a code may carry, typed from its schema (shared/schemas/error-details.ts, which the
 * OpenAPI document states): `never` for codes that carry none. A type-only import: no bundle
 * that throws an error loads zod for it.
 */
export type ErrorDetailsOf<C extends ErrorCode> = C extends keyof ErrorDetailsSchemas
  ? output<ErrorDetailsSchemas[C]>
  : never;

export class ServiceError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails | undefined;
  /** Every offending input field and its message (validation errors). */
  readonly fields: Record<string, string> | undefined;
  /** How long a client should wait before trying again, when waiting helps. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: C,
    message: string,
    options: {
      details?: ErrorDetailsOf<C>;
      fields?: Record<string, string>;
      retryAfterSeconds?: number;
    } = {},
  ) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.details = options.details;
    this.fields = options.fields;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

export class BadRequestError extends ServiceError<'BAD_REQUEST'> {
  constructor(message: string, details?: ErrorDetailsOf<'BAD_REQUEST'>) {
    super('BAD_REQUEST', message, { details });
  }
}

export class UnauthorizedError extends ServiceError<'UNAUTHORIZED'> {
  constructor(message = 'Authentication is missing or invalid') {
    super('UNAUTHORIZED', message);
  }
}

export class ModuleRequiredError extends ServiceError<'INTEGRATION_MODULE_REQUIRED'> {
  constructor(module: string, feature: string) {
    super('INTEGRATION_MODULE_REQUIRED', `The organization needs the ${module} module for this feature`, {
      details: { module, feature },
    });
  }
}

export class ForbiddenError extends ServiceError<'FORBIDDEN'> {
  constructor(message = 'The credential is not allowed to do this', details?: ErrorDetailsOf<'FORBIDDEN'>) {
    super('FORBIDDEN', message, { details });
  }
}

export class NotFoundError extends ServiceError<'NOT_FOUND'> {
  constructor(message = 'Resource not found', details?: ErrorDetailsOf<'NOT_FOUND'>) {
    super('NOT_FOUND', message, { details });
  }
}

export class MethodNotAllowedError extends ServiceError<'METHOD_NOT_ALLOWED'> {
  constructor(allowed: Readonly<ErrorDetailsOf<'METHOD_NOT_ALLOWED'>['allowed']>) {
    super('METHOD_NOT_ALLOWED', 'This path does not accept that method', {
      details: { allowed: [...allowed] },
    });
  }
}

export class ConflictError extends ServiceError<'CONFLICT'> {
  constructor(message: string, details?: ErrorDetailsOf<'CONFLICT'>) {
    super('CONFLICT', message, { details });
  }
}

export class PreconditionFailedError extends ServiceError<'PRECONDITION_FAILED'> {
  constructor(currentVersion: number) {
    super('PRECONDITION_FAILED', 'If-Match does not match the current version', {
      details: { currentVersion },
    });
  }
}

export class PayloadTooLargeError extends ServiceError<'PAYLOAD_TOO_LARGE'> {
  constructor(limitBytes: number) {
    super('PAYLOAD_TOO_LARGE', `The body exceeds ${limitBytes} bytes`, { details: { limitBytes } });
  }
}

export class UnsupportedMediaTypeError extends ServiceError<'UNSUPPORTED_MEDIA_TYPE'> {
  constructor() {
    super('UNSUPPORTED_MEDIA_TYPE', 'Send JSON bodies with Content-Type: application/json');
  }
}

/** What a validation error tells beyond the field it names first. */
type ValidationDetails = Omit<ErrorDetailsOf<'VALIDATION_ERROR'>, 'field'>;

export class ValidationError extends ServiceError<'VALIDATION_ERROR'> {
  constructor(message: string, fields: Record<string, string>, details: ValidationDetails = {}) {
    super('VALIDATION_ERROR', message, {
      fields,
      // Every caller names at least one field; the first is the one integrators look at.
      details: { field: Object.keys(fields)[0] ?? '', ...details },
    });
  }

  static field(field: string, message: string, details: ValidationDetails = {}): ValidationError {
    return new ValidationError(message, { [field]: message }, details);
  }
}

/** A limit's state as the `RateLimit-*` headers report it. */
export interface RateQuota {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

export class RateLimitedError extends ServiceError<'RATE_LIMITED'> {
  /** The limit that refused, when it is not the credential's own (which the stack reports anyway). */
  readonly quota: RateQuota | undefined;

  constructor(
    retryAfterSeconds: number,
    options: {
      quota?: RateQuota;
      message?: string;
      details?: Omit<ErrorDetailsOf<'RATE_LIMITED'>, 'retryAfterSeconds'>;
    } = {},
  ) {
    super('RATE_LIMITED', options.message ?? 'Too many requests', {
      details: { retryAfterSeconds, ...options.details },
      retryAfterSeconds,
    });
    this.quota = options.quota;
  }
}

export class UpstreamError extends ServiceError<'UPSTREAM_ERROR'> {
  constructor(message: string, details?: ErrorDetailsOf<'UPSTREAM_ERROR'>) {
    super('UPSTREAM_ERROR', message, { details });
  }
}

export class ServiceUnavailableError extends ServiceError<'SERVICE_UNAVAILABLE'> {
  constructor(message = 'The service is temporarily unavailable, retry shortly', retryAfterSeconds = 1) {
    super('SERVICE_UNAVAILABLE', message, { retryAfterSeconds });
  }
}
