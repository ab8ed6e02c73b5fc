import {
  getHealth,
  getOpenApi,
  getReference,
  getReferenceAsset,
  type RouteLoader,
} from './service-documents';

export type { RouteLoader };

/**
 * The platform group's routes, given a way to load every route of the API (the OpenAPI document
 * describes them all). The group takes the loader rather than importing the route table, which
 * lists this group in return.
 */
export const platformRoutes = (everyRoute: RouteLoader) => [
  getHealth,
  getOpenApi(everyRoute),
  getReference,
  getReferenceAsset,
];
