import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { build } from 'esbuild';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { handler } from '../../functions/platform/handler';
import { referenceAssetNames } from '../../functions/platform/reference-page';
import { logger } from '../../shared/logger';
import { apiGatewayEvent, lambdaContext } from './helpers/apigw-event';

/**
 * The reference page (no browser here: `npm run docs:screenshot` renders it in Chromium): it links
 * only files this service serves, each with its media type, under a CSP that allows exactly them.
 */
const ASSET_RESOURCE = '/api/docs/assets/{file}';
const PAGE_URL = 'https://api.example.com/v1/api/docs';

async function get(resource: string, path: string, options: { file?: string; v?: string } = {}) {
  const event = apiGatewayEvent({
    method: 'GET',
    resource,
    path,
    pathParameters: options.file === undefined ? null : { file: options.file },
    query: options.v === undefined ? null : { v: options.v },
  });
  return (await handler(event, lambdaContext('platform'))) as APIGatewayProxyResult;
}

const header = (response: APIGatewayProxyResult, name: string): string =>
  String(
    Object.entries(response.headers ?? {}).find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1] ??
      '',
  );

function directives(policy: string): Map<string, string[]> {
  return new Map(
    policy
      .split(';')
      .map((directive) => directive.trim().split(/\s+/))
      .filter((parts) => parts[0])
      .map(([name = '', ...sources]) => [name, sources]),
  );
}

/** Every URL the page makes the browser load, with the element that loads it. */
function linksOf(html: string): { tag: string; url: string }[] {
  return [...html.matchAll(/<(\w+)\b[^>]*?\s(?:src|href)="([^"]*)"/g)].map((match) => ({
    tag: match[1] ?? '',
    url: match[2] ?? '',
  }));
}

describe('GET /api/docs', () => {
  beforeEach(() => {
    vi.spyOn(logger, 'info').mockImplementation(() => undefined);
  });

  it('is an HTML page, public, with no inline script or style', async () => {
    const response = await get('/api/docs', '/api/docs');
    expect(response.statusCode).toBe(200);
    expect(header(response, 'content-type')).toBe('text/html; charset=utf-8');
    expect(response.body).toMatch(/^<!doctype html>/);
    for (const [, attributes, content] of response.body.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)) {
      expect(attributes).toMatch(/\ssrc="/);
      expect(content).toBe('');
    }
    expect(response.body).not.toMatch(/<style\b|\sstyle="|\son\w+="/i);
  });

  it('links only files of this origin under /api/docs/assets/ (and an empty data: icon)', async () => {
    const links = linksOf((await get('/api/docs', '/api/docs')).body);
    const loaded = links.filter((link) => link.tag !== 'a');
    expect(loaded.map((link) => link.tag).sort()).toEqual(['link', 'link', 'script', 'script']);
    for (const { url } of loaded) {
      if (url === 'data:,') continue;
      expect(url).not.toMatch(/^[a-z][a-z0-9+.-]*:|^\/\//i);
      const resolved = new URL(url, PAGE_URL);
      expect(resolved.origin).toBe(new URL(PAGE_URL).origin);
      expect(resolved.pathname).toMatch(/^\/v1\/api\/docs\/assets\/[^/]+$/);
    }
    expect(loaded.filter((link) => link.url === 'data:,')).toEqual([{ tag: 'link', url: 'data:,' }]);
  });

  it('serves every linked file with its media type, under the version the page links', async () => {
    const page = (await get('/api/docs', '/api/docs')).body;
    const assets = linksOf(page)
      .filter((link) => link.tag !== 'a' && link.url !== 'data:,')
      .map(({ tag, url }) => ({ tag, url: new URL(url, PAGE_URL) }));
    expect(assets.map(({ url }) => url.pathname.split('/').pop()).sort()).toEqual(
      [...referenceAssetNames].sort(),
    );
    for (const { tag, url } of assets) {
      const file = url.pathname.split('/').pop() ?? '';
      const v = url.searchParams.get('v') ?? '';
      const response = await get(ASSET_RESOURCE, `/api/docs/assets/${file}`, { file, v });
      expect(response.statusCode, file).toBe(200);
      expect(header(response, 'content-type'), file).toBe(
        tag === 'script' ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8',
      );
      expect(header(response, 'x-content-type-options')).toBe('nosniff');
      expect(header(response, 'cache-control')).toBe('public, max-age=31536000, immutable');
      expect(response.body.length).toBeGreaterThan(100);
      expect(createHash('sha256').update(response.body).digest('hex').slice(0, 16)).toBe(v);
    }
  });

  it('caches a file briefly when asked without the current version', async () => {
    const file = 'swagger-ui.css';
    for (const v of [undefined, '0123456789abcdef']) {
      const response = await get(ASSET_RESOURCE, `/api/docs/assets/${file}`, { file, ...(v && { v }) });
      expect(response.statusCode).toBe(200);
      expect(header(response, 'cache-control')).toBe('public, max-age=300');
    }
  });

  it('has a CSP that allows exactly those files: scripts and styles from this origin only', async () => {
    const response = await get('/api/docs', '/api/docs');
    const policy = directives(header(response, 'content-security-policy'));
    expect(Object.fromEntries(policy)).toEqual({
      'default-src': ["'none'"],
      'script-src': ["'self'"],
      'style-src': ["'self'"],
      // swagger-ui.css draws its icons as data: SVG images; the page's icon is an empty data: URL.
      'img-src': ['data:'],
      'connect-src': ["'self'"],
      'base-uri': ["'none'"],
      'form-action': ["'none'"],
      'frame-ancestors': ["'none'"],
    });
    const sources = [...policy.values()].flat();
    expect(sources).not.toContain("'unsafe-eval'");
    expect(sources).not.toContain("'unsafe-inline'");
    expect(sources.filter((source) => /^(https?:|wss?:|\*|[\w-]+\.[\w.-]+)/i.test(source))).toEqual([]);
  });

  it('answers 404 for any file name that is not on the list', async () => {
    const names = [
      'package.json',
      'swagger-ui.js',
      'swagger-initializer.js',
      'index.html',
      'swagger-ui-bundle.js.map',
      '../package.json',
      '../../../package.json',
      '..%2Fpackage.json',
      '/etc/passwd',
      'SWAGGER-UI.CSS',
      '',
    ];
    for (const file of names) {
      const response = await get(ASSET_RESOURCE, `/api/docs/assets/${encodeURIComponent(file)}`, { file });
      expect(response.statusCode, file).toBe(404);
      expect(header(response, 'content-type')).toMatch(/^application\/json/);
      expect(JSON.parse(response.body).error.code).toBe('NOT_FOUND');
    }
  });

  it('keeps the renderer out of the platform function bundle', async () => {
    const result = await build({
      absWorkingDir: fileURLToPath(new URL('../../', import.meta.url)),
      entryPoints: ['functions/platform/handler.ts'],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      minify: true,
      external: ['@aws-sdk/*'],
      mainFields: ['module', 'main'],
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((input) => input.includes('swagger-ui'))).toEqual([]);
    const bytes = result.outputFiles.reduce((total, file) => total + file.contents.length, 0);
    // swagger-ui-bundle.js alone is ~1.7 MB; the whole function, route table included, ~0.2 MB.
    expect(bytes).toBeLessThan(1_000_000);
  });
});
