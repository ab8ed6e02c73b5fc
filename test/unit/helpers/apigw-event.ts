import type { APIGatewayProxyEvent } from 'aws-lambda';
import { proxyEvent } from '../../../infra/local/lambda-event';

export interface EventOptions {
  method: string;
  /** API Gateway's resource template, e.g. `/api/widgets/{id}`. */
  resource: string;
  /** The concrete path; defaults to the resource. */
  path?: string;
  headers?: Record<string, string>;
  body?: string | null;
  isBase64Encoded?: boolean;
  pathParameters?: Record<string, string> | null;
  query?: Record<string, string> | null;
  requestId?: string;
}

/** An API Gateway REST (v1) proxy event, as the gateway would hand it to the function. */
export function apiGatewayEvent(options: EventOptions): APIGatewayProxyEvent {
  return proxyEvent({ ...options, sourceIp: '203.0.113.7', stage: 'prod' });
}

/** A Lambda context with nothing the stack should depend on. */
export { lambdaContext } from '../../../infra/local/lambda-event';
