/**
 * Every error the API can answer with. The envelope is written once, in the error formatter
 * middleware; handlers and the data layer only throw these.
 */
export type ErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHORIZED'
  | 'INTEGRATION_MODULE_REQUIRED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'CONFLICT'
  | 'PRECONDITION_FAILED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'VALIDATION_ERROR'
  | 'RATE_LIMITED'
  | 'INTERNAL_ERROR'
  | 'SERVICE_UNAVAILABLE';

export type ErrorDetails = Record<string, unknown>;

export class HttpError extends Error {
  readonly statusCode: number;
  readonly code: ErrorCode;
  readonly details: ErrorDetails | undefined;
  readonly fields: Record<string, string> | undefined;
  readonly headers: Record<string, string>;
  /** Client errors explain themselves; server errors never leak their message. */
  readonly expose: boolean;

  constructor(
    statusCode: number,
    code: ErrorCode,
    message: string,
    options: {
      details?: ErrorDetails;
      fields?: Record<string, string>;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(message);
    this.name = new.target.name;
    this.statusCode = statusCode;
    this.code = code;
    this.details = options.details;
    this.fields = options.fields;
    this.headers = options.headers ?? {};
    this.expose = statusCode < 500;
  }
}

export class BadRequestError extends HttpError {
  constructor(message: string, details?: ErrorDetails) {
    super(400, 'BAD_REQUEST', message, { details });
  }
}

export class UnauthorizedError extends HttpError {
  constructor(message = 'Authentication is missing or invalid') {
    super(401, 'UNAUTHORIZED', message, { headers: { 'WWW-Authenticate': 'Bearer' } });
  }
}

export class ModuleRequiredError extends HttpError {
  constructor(module: string, feature: string) {
    super(
      402,
      'INTEGRATION_MODULE_REQUIRED',
      `The organization needs the ${module} module for this feature`,
      {
        details: { module, feature },
      },
    );
  }
}

export class ForbiddenError extends HttpError {
  constructor(message = 'The credential is not allowed to do this', details?: ErrorDetails) {
    super(403, 'FORBIDDEN', message, { details });
  }
}

export class NotFoundError extends HttpError {
  constructor(message = 'Resource not found', details?: ErrorDetails) {
    super(404, 'NOT_FOUND', message, { details });
  }
}

export class MethodNotAllowedError extends HttpError {
  constructor(allowed: readonly string[]) {
    super(405, 'METHOD_NOT_ALLOWED', 'This path does not accept that method', {
      details: { allowed },
      headers: { Allow: allowed.join(', ') },
    });
  }
}

export class ConflictError extends HttpError {
  constructor(message: string, details?: ErrorDetails) {
    super(409, 'CONFLICT', message, { details });
  }
}

export class PreconditionFailedError extends HttpError {
  constructor(currentVersion: number) {
    super(412, 'PRECONDITION_FAILED', 'If-Match does not match the current version', {
      details: { currentVersion },
    });
  }
}

export class PayloadTooLargeError extends HttpError {
  constructor(limitBytes: number) {
    super(413, 'PAYLOAD_TOO_LARGE', `The body exceeds ${limitBytes} bytes`, { details: { limitBytes } });
  }
}

export class UnsupportedMediaTypeError extends HttpError {
  constructor() {
    super(415, 'UNSUPPORTED_MEDIA_TYPE', 'Send JSON bodies with Content-Type: application/json');
  }
}

export class ValidationError extends HttpError {
  constructor(message: string, fields: Record<string, string>, details: ErrorDetails = {}) {
    const first = Object.keys(fields)[0];
    super(422, 'VALIDATION_ERROR', message, {
      fields,
      details: { ...(first ? { field: first } : {}), ...details },
    });
  }

  static field(field: string, message: string, details: ErrorDetails = {}): ValidationError {
    return new ValidationError(message, { [field]: message }, details);
  }
}

export class RateLimitedError extends HttpError {
  constructor(retryAfterSeconds: number) {
    super(429, 'RATE_LIMITED', 'Too many requests', {
      details: { retryAfterSeconds },
      headers: { 'Retry-After': String(retryAfterSeconds) },
    });
  }
}

export class ServiceUnavailableError extends HttpError {
  constructor(message = 'The service is temporarily unavailable, retry shortly') {
    super(503, 'SERVICE_UNAVAILABLE', message, { headers: { 'Retry-After': '1' } });
  }
}
