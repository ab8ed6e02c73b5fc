import { createRequire } from 'node:module';
import { dirname } from 'node:path';

/**
 * The reference page's renderer is Swagger UI (`swagger-ui-dist`): its files are served from disk,
 * never imported, so its browser code stays out of every function's JS bundle. The build of
 * the platform function copies them into this folder next to its `index.mjs` (see `bundledFiles` in
 * infra/constructs/service-function.ts); locally they are read from the installed package.
 */
export const BUNDLED_ASSET_DIR = 'reference-assets';

/** The only renderer files the service serves, with their media types. */
export const rendererFiles = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
} as const;

export type RendererFile = keyof typeof rendererFiles;

/** Where the renderer package is installed: at synth time, and at run time outside Lambda. */
export function rendererPackageDir(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}
