import type { Readable } from 'node:stream';
import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { Caller } from '../auth/caller';
import type { Organization } from '../db/organizations';
import type { AnyRoute } from './route';

/** What the middleware stack learns about a request, typed, in the order the stack learns it. */
export interface RequestState {
  requestId: string;
  startedAtMs: number;
  /** Lower-cased header names; the last value wins for repeated headers. */
  headers: Record<string, string>;
  route?: AnyRoute;
  /** The parsed JSON body (undefined when none was sent). */
  body?: unknown;
  caller?: Caller;
  organization?: Organization;
  input?: { params: unknown; query: unknown; body: unknown };
  responseHeaders: Record<string, string>;
  /** A stored answer to replay instead of running the handler (Idempotency-Key). */
  replay?: { statusCode: number; headers: Record<string, string>; body: string };
}

export type HandlerContext = Context & { state: RequestState };

/** An answer as the stack passes it along: buffered text, or (streaming groups only) a stream. */
export type HttpResult = Omit<APIGatewayProxyResult, 'body'> & { body: string | Readable };

export type HttpRequest = middy.Request<APIGatewayProxyEvent, HttpResult, Error, HandlerContext>;
export type HttpMiddleware = middy.MiddlewareObj<APIGatewayProxyEvent, HttpResult, Error, HandlerContext>;
