import { config } from '../../shared/config';
import { ok, reply, route } from '../../shared/http/route';
import type { RouteCatalog } from '../../shared/http/route-catalog';
import * as z from '../../shared/schemas/zod';
import {
  referenceAsset,
  referenceAssetNames,
  referenceContentSecurityPolicy,
  referencePage,
} from './reference-page';

/** The whole API's catalog, loaded on first need (the platform group does not import the table). */
export type CatalogLoader = () => Promise<RouteCatalog>;

export const getHealth = route({
  method: 'GET',
  path: '/api/health',
  operationId: 'getHealth',
  summary: 'Health check',
  tag: 'Service',
  callers: ['public'],
  response: {
    status: 200,
    schema: z.object({ status: z.literal('ok'), version: z.string() }),
    description: 'The service is up',
  },
  examples: { response: { status: 'ok', version: '0.1.0' } },
  handle: async () => ok({ status: 'ok' as const, version: config.serviceVersion }),
});

export const getOpenApi = (catalog: CatalogLoader) =>
  route({
    method: 'GET',
    path: '/api/openapi.json',
    operationId: 'getOpenApi',
    summary: 'The OpenAPI 3.1 document',
    description: 'Generated from the route table and the same zod schemas that validate requests.',
    tag: 'Service',
    callers: ['public'],
    response: { status: 200, schema: z.record(z.string(), z.unknown()), description: 'OpenAPI 3.1 document' },
    examples: {
      response: { openapi: '3.1.0', info: { title: 'Customer Conversation Service API', version: '0.1.0' } },
    },
    // Built once (or read from the build's file), then kept: it cannot change while the code does not.
    // Its server is the deployment it was fetched from, so a client generated from it calls here.
    handle: async ({ baseUrl }) => {
      const { openApi } = await catalog();
      const document = baseUrl ? { ...openApi, servers: [servedFrom(baseUrl)] } : openApi;
      return ok(document, { 'Cache-Control': 'public, max-age=300', Vary: 'Host, X-Forwarded-Proto' });
    },
  });

/** The server of a served document: where it was fetched from. */
function servedFrom(baseUrl: string) {
  return { url: baseUrl, description: 'This deployment: where this document was served from' };
}

export const getReference = route({
  method: 'GET',
  path: '/api/docs',
  operationId: 'getReference',
  summary: 'Browsable API reference',
  description:
    'Swagger UI over `openapi.json`, with "Try it out" against this API. Every script and stylesheet is served from `/api/docs/assets/`.',
  tag: 'Service',
  callers: ['public'],
  response: {
    status: 200,
    schema: z.string(),
    description: 'HTML page rendering the OpenAPI document',
    contentType: 'text/html',
  },
  examples: { response: '<!doctype html><html lang="en">…</html>' },
  handle: async () =>
    reply(200, await referencePage(), {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': referenceContentSecurityPolicy,
      'Cache-Control': 'public, max-age=300',
    }),
});

/** A year: the page links each file with a version that changes with its content. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

export const getReferenceAsset = route({
  method: 'GET',
  path: '/api/docs/assets/{file}',
  operationId: 'getReferenceAsset',
  summary: 'A script or stylesheet of the API reference page',
  description:
    'Only the files the reference page links are served; any other name is 404. With the `v` the page links, the answer may be cached for a year.',
  tag: 'Service',
  callers: ['public'],
  params: z.object({ file: z.enum(referenceAssetNames) }),
  query: z.object({ v: z.optional(z.string().check(z.length(16), z.regex(/^[0-9a-f]{16}$/))) }),
  response: {
    status: 200,
    schema: z.string(),
    description: 'The file, as text/javascript or text/css',
    contentType: ['text/javascript', 'text/css'],
  },
  examples: { response: "window.ui = SwaggerUIBundle({ url: 'openapi.json', dom_id: '#reference' });" },
  handle: async ({ params, query }) => {
    const asset = await referenceAsset(params.file);
    return reply(200, asset.body, {
      'Content-Type': asset.contentType,
      'Cache-Control': query.v === asset.version ? IMMUTABLE : 'public, max-age=300',
    });
  },
});
