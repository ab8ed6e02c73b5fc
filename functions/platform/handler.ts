import { readFile } from 'node:fs/promises';
import { catalogIndex, ROUTE_CATALOG_FILE, type RouteCatalog } from '../../shared/http/route-catalog';
import type { RouteIndex } from '../../shared/http/router';
import { createHandler } from '../../shared/http/stack';
import { platformRoutes } from './routes';

let catalog: Promise<RouteCatalog> | undefined;
let index: Promise<RouteIndex> | undefined;

/**
 * The whole API's catalog, on first need. In AWS the build wrote it next to this bundle and
 * replaced the condition below (ROUTE_CATALOG_DEFINE), so the bundler drops the other branch: no
 * other group's code, no OpenAPI builder in this function. Elsewhere (`npm start`, tests) it is
 * built from the route table, imported lazily so that a cold health check does not build every
 * group's schemas.
 */
const loadCatalog = (): Promise<RouteCatalog> => {
  catalog ??=
    process.env.SERVICE_ROUTE_CATALOG === 'bundled'
      ? readFile(new URL(`./${ROUTE_CATALOG_FILE}`, import.meta.url), 'utf8').then(
          (text) => JSON.parse(text) as RouteCatalog,
        )
      : import('../routes').then(({ routeCatalog }) => routeCatalog());
  return catalog;
};

/**
 * Besides its own routes, this function receives what API Gateway matches to no method (`ANY` on a
 * known resource → 405) or to no resource (`{proxy+}` → 404).
 */
export const handler = createHandler(platformRoutes(loadCatalog), {
  everyRoute: () => {
    index ??= loadCatalog().then(catalogIndex);
    return index;
  },
});
