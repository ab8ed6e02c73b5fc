import { config } from '../../shared/config';
import { buildOpenApi } from '../../shared/http/openapi';
import { type AnyRoute, ok, reply, route } from '../../shared/http/route';
import * as z from '../../shared/schemas/zod';
import { referencePage } from './reference-page';

/** Every route of the API, loaded on first need (the platform group does not import the table). */
export type RouteLoader = () => Promise<readonly AnyRoute[]>;

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
  handle: async () => ok({ status: 'ok' as const, version: config.serviceVersion }),
});

export const getOpenApi = (everyRoute: RouteLoader) => {
  let openApiDocument: Record<string, unknown> | undefined;
  return route({
    method: 'GET',
    path: '/api/openapi.json',
    operationId: 'getOpenApi',
    summary: 'The OpenAPI 3.1 document',
    description: 'Generated from the route table and the same zod schemas that validate requests.',
    tag: 'Service',
    callers: ['public'],
    response: { status: 200, schema: z.record(z.string(), z.unknown()), description: 'OpenAPI 3.1 document' },
    handle: async () => {
      // Built on first use, then kept: the document cannot change while the code does not.
      openApiDocument ??= buildOpenApi(await everyRoute(), config.serviceVersion) as Record<string, unknown>;
      return ok(openApiDocument, { 'Cache-Control': 'public, max-age=300' });
    },
  });
};

export const getReference = route({
  method: 'GET',
  path: '/api/docs',
  operationId: 'getReference',
  summary: 'Browsable API reference',
  tag: 'Service',
  callers: ['public'],
  response: { status: 200, schema: z.string(), description: 'HTML page rendering the OpenAPI document' },
  handle: async () =>
    reply(200, referencePage.html, {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': referencePage.contentSecurityPolicy,
      'Cache-Control': 'public, max-age=300',
    }),
});
