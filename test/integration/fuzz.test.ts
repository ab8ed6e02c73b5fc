import fc from 'fast-check';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { allRoutes } from '../../functions/routes';
import { call, createTenant, createVisitor, platformToken, type Tenant } from '../helpers/api';

let tokens: Record<string, string | undefined>;

beforeAll(async () => {
  const tenant: Tenant = await createTenant();
  tokens = {
    apiKey: tenant.apiKey,
    adminSession: tenant.adminSession,
    operatorSession: tenant.operatorSession,
    visitor: (await createVisitor(tenant.widgetKey)).token,
    platform: platformToken(),
    garbage: 'svc_sk_%%%',
    none: undefined,
  };
});

const concretePath = (template: string, id: string) => template.replace(/\{[^}]+\}/g, id);

describe('no input ever produces a 5xx', () => {
  it('holds for random bodies, ids, queries and credentials on every route', async () => {
    const routes = allRoutes();
    const json = fc.jsonValue({ maxDepth: 3 });
    const request = fc.record({
      route: fc.constantFrom(...routes),
      id: fc.oneof(fc.uuid(), fc.string({ maxLength: 40 }), fc.constant('%00'), fc.constant('..')),
      body: fc.oneof(
        json.map((value) => JSON.stringify(value)),
        fc.string({ maxLength: 200 }),
        // Bodies that parse but are not objects, or nothing at all.
        fc.constantFrom('null', '', '[]', '0', '"x"'),
        // Free-form values nested past their bound, or past the parser's, or large.
        fc
          .record({
            field: fc.constantFrom('metadata', 'customFields', 'data', 'x'),
            levels: fc.constantFrom(8, 9, 31, 33, 65, 10_000),
          })
          .map(({ field, levels }) => `{"${field}":${'{"k":'.repeat(levels)}1${'}'.repeat(levels)}}`),
        fc
          .record({
            field: fc.constantFrom('metadata', 'customFields'),
            size: fc.constantFrom(16 * 1024, 64 * 1024, 250 * 1024),
          })
          .map(({ field, size }) => JSON.stringify({ [field]: { k: 'x'.repeat(size) } })),
      ),
      query: fc.dictionary(
        fc.constantFrom('limit', 'cursor', 'status', 'tag', 'visitorId', 'x'),
        fc.string({ maxLength: 30 }),
      ),
      credential: fc.constantFrom(
        'apiKey',
        'adminSession',
        'operatorSession',
        'visitor',
        'platform',
        'garbage',
        'none',
      ),
    });
    await fc.assert(
      fc.asyncProperty(request, async ({ route, id, body, query, credential }) => {
        const token = tokens[credential];
        const search = new URLSearchParams(query).toString();
        const path = `${concretePath(route.path, encodeURIComponent(id))}${search ? `?${search}` : ''}`;
        const response = await call(route.method, path, {
          token,
          rawBody: route.method === 'GET' ? undefined : body,
          headers: { 'Content-Type': 'application/json' },
        });
        expect(response.status, `${route.method} ${path} ${body} → ${response.text}`).toBeLessThan(500);
      }),
      { numRuns: 300, seed: 20261122 },
    );
  });
});

describe('a body that is not a JSON object is never accepted', () => {
  /** Real resources, so a body that slipped through validation would reach a handler and succeed. */
  async function realIds(): Promise<(path: string) => string> {
    const tenant = await createTenant();
    const visitor = await createVisitor(tenant.widgetKey);
    const conversation = await call<{ id: string }>('POST', '/api/conversations', {
      token: visitor.token,
      body: { message: 'hello' },
    });
    const messages = await call<{ data: Array<{ id: string }> }>(
      'GET',
      `/api/conversations/${conversation.body.id}/messages`,
      { token: tenant.apiKey },
    );
    const note = await call<{ id: string }>('POST', `/api/conversations/${conversation.body.id}/notes`, {
      token: tenant.adminSession,
      body: { content: 'a note' },
    });
    const webhook = await call<{ id: string }>('POST', '/api/webhooks', {
      token: tenant.apiKey,
      body: {
        url: `http://127.0.0.1:${inject('webhookTestPorts')[3]}/fuzz`,
        events: ['conversation.closed'],
      },
    });
    const ids: Record<string, string | undefined> = {
      id: conversation.body.id,
      messageId: messages.body.data[0]?.id,
      noteId: note.body.id,
      orgId: tenant.orgId,
      operatorId: tenant.operatorId,
    };
    tokens.apiKey = tenant.apiKey;
    tokens.adminSession = tenant.adminSession;
    return (path) =>
      path
        .replace('/api/webhooks/{id}', `/api/webhooks/${webhook.body.id}`)
        .replace(/\{([^}]+)\}/g, (_, name: string) => ids[name] ?? '00000000-0000-7000-8000-000000000000');
  }

  it('answers null, arrays and scalars (and no body on PATCH and PUT) without a 2xx on every route with a body', async () => {
    const pathOf = await realIds();
    const bodyRoutes = allRoutes().filter((route) => route.body);
    for (const route of bodyRoutes) {
      const bodies = [
        'null',
        '[]',
        '7',
        '"text"',
        ...(route.method === 'PATCH' || route.method === 'PUT' ? [''] : []),
      ];
      for (const credential of ['apiKey', 'adminSession', 'platform'] as const) {
        for (const body of bodies) {
          const response = await call(route.method, pathOf(route.path), {
            token: tokens[credential],
            rawBody: body,
            headers: { 'Content-Type': 'application/json' },
          });
          const label = `${route.method} ${route.path} as ${credential} with ${JSON.stringify(body)} → ${response.text}`;
          expect([401, 403, 422], label).toContain(response.status);
        }
      }
    }
  });
});
