import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
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
