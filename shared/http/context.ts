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

/**
 * One request on its way through the stack (the shape middy gives its middlewares): the event, the
 * Lambda context carrying `state`, and the answer or error so far.
 */
export interface HttpRequest {
  event: APIGatewayProxyEvent;
  context: HandlerContext;
  response: APIGatewayProxyResult | undefined;
  error: unknown;
}

/**
 * A step of the stack: returns nothing, or a promise of nothing when it has something to wait for.
 * As in middy, a step that returns (or resolves to) a value ends its phase with that value as the
 * answer (from `before`: the handler and the `after` steps are skipped); no step here does.
 */
export type HttpStep = (request: HttpRequest) => unknown;

export interface HttpMiddleware {
  before?: HttpStep;
  after?: HttpStep;
  onError?: HttpStep;
}
