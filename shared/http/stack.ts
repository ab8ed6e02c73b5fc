import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { HandlerContext, HttpMiddleware, HttpRequest, HttpStep } from './context';
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

export type ApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** Awaits only what is a promise: most steps finish synchronously, and an await costs a tick. */
function isPromise(value: unknown): value is Promise<unknown> {
  return typeof (value as Promise<unknown> | null | undefined)?.then === 'function';
}

/**
 * Runs one phase's steps in order, from `from`; a step that returns an answer ends the phase with it
 * (middy's early response). True when a step answered. Synchronous until a step returns a promise:
 * the rest then runs when it settles, and the result is a promise.
 */
function runSteps(request: HttpRequest, steps: readonly HttpStep[], from = 0): boolean | Promise<boolean> {
  for (let i = from; i < steps.length; i++) {
    const answer = (steps[i] as HttpStep)(request);
    if (isPromise(answer)) {
      return answer.then((settled) => {
        if (settled === undefined) return runSteps(request, steps, i + 1);
        request.response = settled as APIGatewayProxyResult;
        return true;
      });
    }
    if (answer !== undefined) {
      request.response = answer as APIGatewayProxyResult;
      return true;
    }
  }
  return false;
}

/**
 * A middy-compatible runner for exactly what this stack uses (middy core 6 semantics, no plugins,
 * no timeout): `before` steps in order, then the handler, then `after` steps in reverse order of
 * registration; anything thrown resets the response and runs the `onError` steps (reverse order),
 * which must leave a response or the error is rethrown. Unlike middy it awaits only promises.
 */
function compose(
  handler: (event: APIGatewayProxyEvent, context: HandlerContext) => Promise<APIGatewayProxyResult>,
  middlewares: readonly HttpMiddleware[],
): ApiHandler {
  const before: HttpStep[] = [];
  const after: HttpStep[] = [];
  const onError: HttpStep[] = [];
  for (const middleware of middlewares) {
    if (middleware.before) before.push(middleware.before);
    if (middleware.after) after.unshift(middleware.after);
    if (middleware.onError) onError.unshift(middleware.onError);
  }

  async function fail(request: HttpRequest, error: unknown): Promise<APIGatewayProxyResult> {
    request.response = undefined;
    request.error = error;
    try {
      let done = runSteps(request, onError);
      if (isPromise(done)) done = await done;
    } catch (failure) {
      (failure as { originalError?: unknown }).originalError = request.error;
      request.error = failure;
      throw failure;
    }
    if (request.response === undefined) throw request.error;
    return request.response;
  }

  return async (event = {} as APIGatewayProxyEvent, context = {} as Context) => {
    const request: HttpRequest = {
      event,
      context: context as HandlerContext,
      response: undefined,
      error: undefined,
    };
    try {
      let answered = runSteps(request, before);
      if (isPromise(answered)) answered = await answered;
      if (!answered) {
        request.response = await handler(request.event, request.context);
        let done = runSteps(request, after);
        if (isPromise(done)) done = await done;
      }
    } catch (error) {
      return fail(request, error);
    }
    return request.response as APIGatewayProxyResult;
  };
}

/**
 * The one middleware stack every API function runs (middy's model: before / after / onError steps,
 * run by `compose` above). Order matters and is the design:
 *
 *  before (top to bottom)            after / onError (bottom to top)
 *  1. requestContext  request id, headers, log keys      → X-Request-Id, access-log line (last)
 *  2. securityHeaders                                    → security headers on every answer
 *  3. errorFormatter                                     → any error becomes the envelope (first in onError)
 *  4. resolveRoute    404 / 405, before any credential is looked at
 *  5. parseBody       413, 415, 400
 *  6. authenticate    401; caller and organization from the credential only
 *  7. rateLimit       429 + RateLimit-* headers, per credential
 *  8. authorize       403 caller kind, 402 module, 403 scope / admin role
 *  9. validate        404 bad path id, 422 query / body (strict)
 * 10. idempotency     replay or 409; stores the answer     → stores / releases the key
 *     handler         the route's use case, then serialization
 */
export function createHandler(
  routes: readonly AnyRoute[],
  options: { everyRoute?: () => Promise<RouteIndex> } = {},
): ApiHandler {
  const own = indexRoutes(routes);
  const dispatch = async (
    _event: APIGatewayProxyEvent,
    context: HandlerContext,
  ): Promise<APIGatewayProxyResult> => {
    const { state } = context;
    if (state.replay) return state.replay;
    const { route, caller, input } = state;
    if (!route || !caller || !input) throw new Error('middleware stack did not resolve the request');
    const reply = await route.handle({
      caller,
      organization: state.organization,
      params: input.params,
      query: input.query,
      body: input.body,
      headers: state.headers,
      requestId: state.requestId,
    } as Parameters<AnyRoute['handle']>[0]);
    return serializeReply(reply);
  };

  return compose(dispatch, [
    requestContext(),
    securityHeaders(),
    errorFormatter(),
    resolveRoute(own, options.everyRoute),
    parseBody(),
    authenticate(),
    rateLimit(),
    authorize(),
    validate(),
    idempotency(),
  ]);
}
