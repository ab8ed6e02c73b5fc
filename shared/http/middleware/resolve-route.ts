import { MethodNotAllowedError, NotFoundError } from '../../errors';
import type { HttpMiddleware, HttpRequest } from '../context';
import { preflightRoute } from '../cors';
import type { RouteIndex } from '../router';

/**
 * Routing is decided before authentication: an unknown path is 404 and a known path with another
 * method is 405, whoever asks. `everyRoute` is the whole API's index, which only the fallback
 * function needs (in AWS, API Gateway sends it the `ANY` and `{proxy+}` leftovers), loaded on the
 * first miss so that its cold start does not pay for every group's schemas. An `OPTIONS` request on a
 * known path is a CORS preflight and gets the path's methods.
 */
export const resolveRoute = (own: RouteIndex, everyRoute?: () => Promise<RouteIndex>): HttpMiddleware => {
  /** A miss: 405 or 404, or an OPTIONS preflight, possibly after loading the whole API's index. */
  async function miss(request: HttpRequest): Promise<void> {
    const { httpMethod, resource } = request.event;
    const allowed = (everyRoute ? await everyRoute() : own).methodsOf(resource);
    if (allowed.length > 0 && httpMethod === 'OPTIONS') {
      request.context.state.route = preflightRoute(resource, allowed);
      return;
    }
    if (allowed.length > 0) throw new MethodNotAllowedError(allowed);
    throw new NotFoundError(`No route for ${httpMethod} ${request.event.path}`);
  }
  return {
    // Synchronous on a hit: the common case waits for nothing.
    before: (request) => {
      const route = own.find(request.event.httpMethod, request.event.resource);
      if (!route) return miss(request);
      request.context.state.route = route;
    },
  };
};
