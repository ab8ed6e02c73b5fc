import { Readable } from 'node:stream';
import type { APIGatewayProxyResult } from 'aws-lambda';
import type { HttpResult } from './context';

export function jsonResponse(
  statusCode: number,
  body: unknown,
  headers: Record<string, string> = {},
): APIGatewayProxyResult {
  return {
    statusCode,
    headers: { 'Content-Type': 'application/json; charset=utf-8', ...headers },
    body: body === undefined ? '' : JSON.stringify(body),
  };
}

/**
 * A reply whose body is already text (the HTML reference page) or a stream (exports, streaming
 * groups only); JSON otherwise.
 */
export function serializeReply(reply: {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}): HttpResult {
  if (reply.body instanceof Readable) {
    return { statusCode: reply.status, headers: reply.headers ?? {}, body: reply.body };
  }
  const contentType = reply.headers?.['Content-Type'];
  if (typeof reply.body === 'string' && contentType && !contentType.startsWith('application/json')) {
    return { statusCode: reply.status, headers: reply.headers ?? {}, body: reply.body };
  }
  return jsonResponse(reply.status, reply.body, reply.headers);
}
