import type { HttpMethod } from './route';
import { methodsOf, type RouteIndex } from './router';

/**
 * What the platform function needs of the whole API: each path's methods (404 and 405 for what API
 * Gateway sends it unmatched, CORS preflights) and the OpenAPI document. Built from the route table
 * (`routeCatalog()` in functions/routes.ts). In AWS the build writes it next to the platform
 * function's bundle, so that bundle carries no other group's code: the route table pulls in every
 * group's implementation, libraries included (docs/decisions.md, "The platform function reads a
 * route catalog").
 */
export interface RouteCatalog {
  /** Path template → its methods, in route-table order. */
  methods: Readonly<Record<string, readonly HttpMethod[]>>;
  openApi: Readonly<Record<string, unknown>>;
}

/** Next to the platform function's `index.mjs` in its code (see infra/function-tuning.ts). */
export const ROUTE_CATALOG_FILE = 'route-catalog.json';

/**
 * The expression the platform function's build replaces (esbuild `define`): with it the handler
 * reads the catalog file, and the bundler drops the branch that imports the route table.
 */
export const ROUTE_CATALOG_DEFINE: Readonly<Record<string, string>> = {
  'process.env.SERVICE_ROUTE_CATALOG': '"bundled"',
};

/** The catalog as the router's index of the whole API (only `methodsOf` is asked of it). */
export function catalogIndex(catalog: RouteCatalog): RouteIndex {
  return { find: () => undefined, methodsOf: (resource) => methodsOf(catalog.methods, resource) };
}
