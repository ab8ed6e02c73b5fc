import middy from '@middy/core';
import { executionModeStreamifyResponse } from '@middy/core/StreamifyResponse';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { invokeReady } from '../invoke-ready';
import type { HandlerContext, HttpResult } from './context';
import { authenticate } from './middleware/authenticate';
import { authorize } from './middleware/authorize';
import { errorFormatter } from './middleware/error-formatter';
import { idempotency } from './middleware/idempotency';
import { parseBody } from './middleware/parse-body';
import { rateLimit } from './middleware/rate-limit';
import { requestContext } from './middleware/request-context';
import { resolveRoute } from './middleware/resolve-route';
import { securityHeaders } from './middleware/security-headers';
import { validate } from './middleware/validate';
import type { AnyRoute } from './route';
import { indexRoutes, type RouteIndex } from './router';
import { serializeReply } from './serialize';
import { ensureStreamingRuntime, type StreamingHandler } from './streaming';

export type ApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/**
 * The one middleware stack every API function runs, on middy. Order matters and is the design:
 *
 *  before (top to bottom)            after / onError (bottom to top)
 *  1. requestContext  request id, headers, log keys      → X-Request-Id, access-log line (last)
 *  2. securityHeaders                                    → security headers on every answer
 *  3. errorFormatter                                     → any error becomes the envelope (first in onError)
 *  4. resolveRoute    404 / 405, before any credential is looked at
 *  5. parseBody       413, 415, 400
 *  6. authenticate    401; caller and organization from the credential only
 *  7. rateLimit       429 + RateLimit-* headers, per credential and per organization (a ceiling)
 *  8. authorize       403 caller kind, 402 module, 403 scope / admin role
 *  9. validate        404 bad path id, 422 query / body (strict)
 * 10. idempotency     replay or 409; stores the answer     → stores / releases the key
 *     handler         the route's use case, then serialization
 */
export function createHandler(
  routes: readonly AnyRoute[],
  options: { everyRoute?: () => Promise<RouteIndex> } = {},
): ApiHandler {
  return buildStack(routes, options, false) as unknown as ApiHandler;
}

/**
 * The same stack for a group whose answers may be streams (exports): middy's streamed execution mode,
 * so Lambda sends the prelude (status, headers, after every middleware ran) and then the body as
 * the route produces it. Errors before the first byte are envelopes as anywhere else.
 */
export function createStreamingHandler(routes: readonly AnyRoute[]): StreamingHandler {
  ensureStreamingRuntime();
  return buildStack(routes, {}, true) as unknown as StreamingHandler;
}

/**
 * The URL the caller reached this API at, from what API Gateway says of the request: `Host` and
 * `X-Forwarded-Proto`, and the part of `requestContext.path` before the resource's own path (the
 * stage on the execute-api endpoint, a custom domain's base path, or nothing).
 */
function baseUrlOf(
  event: APIGatewayProxyEvent,
  headers: Readonly<Record<string, string>>,
): string | undefined {
  const host = headers.host;
  if (!host) return undefined;
  const scheme = headers['x-forwarded-proto']?.split(',')[0]?.trim() || 'https';
  const fullPath = event.requestContext?.path ?? event.path;
  const prefix = fullPath.endsWith(event.path) ? fullPath.slice(0, fullPath.length - event.path.length) : '';
  return `${scheme}://${host}${prefix.replace(/\/+$/, '')}`;
}

function buildStack(
  routes: readonly AnyRoute[],
  options: { everyRoute?: () => Promise<RouteIndex> },
  streaming: boolean,
) {
  const own = indexRoutes(routes);
  const dispatch = async (_event: APIGatewayProxyEvent, context: HandlerContext): Promise<HttpResult> => {
    const { state } = context;
    if (state.replay) return state.replay;
    const { route, caller, input } = state;
    if (!route || !caller || !input) throw new Error('middleware stack did not resolve the request');
    // Secrets the routes need are read at the first request (shared/invoke-ready.ts).
    await invokeReady();
    const reply = await route.handle({
      caller,
      organization: state.organization,
      params: input.params,
      query: input.query,
      body: input.body,
      headers: state.headers,
      requestId: state.requestId,
      baseUrl: baseUrlOf(_event, state.headers),
    } as Parameters<AnyRoute['handle']>[0]);
    const result = serializeReply(reply);
    if (!streaming && typeof result.body !== 'string') {
      throw new Error(`${route.operationId} answers a stream but its group is not a streaming one`);
    }
    return result;
  };

  // timeoutEarly is off: API Gateway answers 504 at 29 s on its own, and the per-request timer costs.
  return middy<APIGatewayProxyEvent, HttpResult, Error, HandlerContext>(dispatch, {
    timeoutEarlyInMillis: 0,
    ...(streaming && { executionMode: executionModeStreamifyResponse }),
  })
    .use(requestContext())
    .use(securityHeaders())
    .use(errorFormatter())
    .use(resolveRoute(own, options.everyRoute))
    .use(parseBody())
    .use(authenticate())
    .use(rateLimit())
    .use(authorize())
    .use(validate())
    .use(idempotency());
}
