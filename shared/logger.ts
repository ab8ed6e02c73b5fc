import { Logger } from '@aws-lambda-powertools/logger';

/**
 * The service's structured logger. The request context middleware appends the request id and the
 * organization to every line of a request and resets them afterwards; secrets are never logged
 * (credentials appear only as their id).
 */
export const logger = new Logger({ serviceName: 'conversation-service' });
