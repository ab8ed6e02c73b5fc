import {
  type CatalogLoader,
  getHealth,
  getOpenApi,
  getReference,
  getReferenceAsset,
} from './service-documents';

export type { CatalogLoader };

/**
 * The platform group's routes, given a way to load the whole API's catalog (the OpenAPI document
 * describes every route). The group takes the loader rather than importing the route table, which
 * lists this group in return.
 */
export const platformRoutes = (catalog: CatalogLoader) => [
  getHealth,
  getOpenApi(catalog),
  getReference,
  getReferenceAsset,
];
