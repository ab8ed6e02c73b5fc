import type { AnyRoute } from '../../shared/http/route';
import { indexRoutes, type RouteIndex } from '../../shared/http/router';
import { createHandler } from '../../shared/http/stack';
import { platformRoutes } from './routes';

let routes: Promise<readonly AnyRoute[]> | undefined;
let index: Promise<RouteIndex> | undefined;
const everyRoute = () => {
  routes ??= import('../routes').then(({ allRoutes }) => allRoutes());
  return routes;
};

/**
 * Besides its own routes, this function receives what API Gateway matches to no method (`ANY` on a
 * known resource → 405) or to no resource (`{proxy+}` → 404). The whole route table is imported
 * lazily (esbuild defers a dynamically imported module), so a cold health check does not build
 * every group's schemas.
 */
export const handler = createHandler(platformRoutes(everyRoute), {
  everyRoute: () => {
    index ??= everyRoute().then(indexRoutes);
    return index;
  },
});
