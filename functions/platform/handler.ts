import { indexRoutes, type RouteIndex } from '../../shared/http/router';
import { createHandler } from '../../shared/http/stack';
import { allRoutes } from '../routes';
import { platformRoutes } from './routes';

let everyRoute: RouteIndex | undefined;

/**
 * Besides its own routes, this function receives what API Gateway matches to no method (`ANY` on a
 * known resource → 405) or to no resource (`{proxy+}` → 404).
 */
export const handler = createHandler(platformRoutes, {
  everyRoute: () => {
    everyRoute ??= indexRoutes(allRoutes());
    return everyRoute;
  },
});
