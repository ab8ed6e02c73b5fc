import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUNDLED_ASSET_DIR, type RendererFile, rendererFiles, rendererPackageDir } from './reference-assets';

/**
 * The browsable reference: Swagger UI renders the served OpenAPI document (markdown, schemas,
 * examples, request snippets) and its "Try it out" calls the API on the same origin. Swagger UI
 * rather than Scalar or Redoc: Redoc CE has no try-it, and Scalar's standalone bundle needs
 * `'unsafe-eval'` and inline styles, where Swagger UI runs with scripts and styles from this origin
 * only. Every file is served by this function (no CDN), so the page also works offline.
 */
const INIT_SCRIPT = 'reference.js';

export const referenceAssetNames = [
  'swagger-ui-bundle.js',
  'swagger-ui.css',
  INIT_SCRIPT,
] as const satisfies readonly (RendererFile | typeof INIT_SCRIPT)[];

export type ReferenceAssetName = (typeof referenceAssetNames)[number];

/**
 * `openapi.json` is relative to the page (`/api/docs`), so it also resolves under a stage prefix.
 * The page takes no configuration from its query string (`queryConfigEnabled`: a `?url=` there was
 * Swagger UI's XSS vector) and sends nothing to validator.swagger.io.
 */
const initScript = `window.ui = SwaggerUIBundle({
  url: 'openapi.json',
  dom_id: '#reference',
  deepLinking: true,
  queryConfigEnabled: false,
  validatorUrl: null,
  filter: true,
  showExtensions: true,
  displayRequestDuration: true,
  requestSnippetsEnabled: true,
  defaultModelsExpandDepth: 0,
});
`;

/**
 * Scripts and styles from this origin only: no inline script or style, no `eval`. `img-src data:`
 * because swagger-ui.css draws its icons (chevrons, locks, copy buttons) as `data:` SVG images.
 * `connect-src 'self'` lets the page fetch the document and "Try it out" call the API.
 */
export const referenceContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  'img-src data:',
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export interface ReferenceAsset {
  body: string;
  contentType: string;
  /** Changes with the content: the page links `?v=<version>`, which may be cached for good. */
  version: string;
}

const JAVASCRIPT = 'text/javascript; charset=utf-8';

function asset(bytes: Buffer, contentType: string): ReferenceAsset {
  const version = createHash('sha256').update(bytes).digest('hex').slice(0, 16);
  return { body: bytes.toString('utf8'), contentType, version };
}

/** In Lambda, the folder the build copied next to the bundle; elsewhere, the installed package. */
function rendererDir(): string {
  const bundled = fileURLToPath(new URL(`./${BUNDLED_ASSET_DIR}/`, import.meta.url));
  return existsSync(bundled) ? bundled : rendererPackageDir();
}

let assets: Promise<ReadonlyMap<ReferenceAssetName, ReferenceAsset>> | undefined;

/** Read once per instance, on the first request for the page or one of its files. */
function loadAssets(): Promise<ReadonlyMap<ReferenceAssetName, ReferenceAsset>> {
  assets ??= (async () => {
    const dir = rendererDir();
    const files = await Promise.all(
      (Object.keys(rendererFiles) as RendererFile[]).map(
        async (name) => [name, asset(await readFile(join(dir, name)), rendererFiles[name])] as const,
      ),
    );
    return new Map<ReferenceAssetName, ReferenceAsset>([
      ...files,
      [INIT_SCRIPT, asset(Buffer.from(initScript), JAVASCRIPT)],
    ]);
  })().catch((error: unknown) => {
    assets = undefined;
    throw error;
  });
  return assets;
}

export async function referenceAsset(name: ReferenceAssetName): Promise<ReferenceAsset> {
  const found = (await loadAssets()).get(name);
  if (!found) throw new Error(`reference asset ${name} is not loaded`);
  return found;
}

let html: Promise<string> | undefined;

/** The page; its links are relative to `/api/docs`, so they also resolve under a stage prefix. */
export function referencePage(): Promise<string> {
  html ??= loadAssets()
    .then((loaded) => {
      const href = (name: ReferenceAssetName) => `docs/assets/${name}?v=${loaded.get(name)?.version ?? ''}`;
      return [
        '<!doctype html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width,initial-scale=1">',
        '<title>API reference</title>',
        // No favicon request (it would be a logged 404).
        '<link rel="icon" href="data:,">',
        `<link rel="stylesheet" href="${href('swagger-ui.css')}">`,
        '</head><body>',
        '<noscript>This page needs JavaScript. The OpenAPI document is <a href="openapi.json">openapi.json</a>.</noscript>',
        '<div id="reference"></div>',
        `<script src="${href('swagger-ui-bundle.js')}"></script>`,
        `<script src="${href(INIT_SCRIPT)}"></script>`,
        '</body></html>',
      ].join('');
    })
    .catch((error: unknown) => {
      html = undefined;
      throw error;
    });
  return html;
}
