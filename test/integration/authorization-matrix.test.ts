import { beforeAll, describe, expect, it } from 'vitest';
import { allRoutes } from '../../functions/routes';
import type { CallerKind } from '../../shared/auth/caller';
import { call, createApiKey, createTenant, createVisitor, platformToken } from '../helpers/api';

/**
 * Every route of the route table against every credential kind: a kind the route does not admit is
 * refused (403, or 401 for a widget key outside X-Widget-Key routes), and an admitted kind gets
 * past authentication and authorization. Read straight from the table, so new routes are covered
 * as they are added.
 */
type Credential = { kind: CallerKind; headers: Record<string, string> };

let credentials: Credential[];
/** Keys restricted to one scope each: every route finds one whose scope is not its own. */
let restricted: { scope: string; key: string }[];

beforeAll(async () => {
  const tenant = await createTenant();
  const visitor = await createVisitor(tenant.widgetKey);
  restricted = await Promise.all(
    ['chatbot:read', 'integrations:read'].map(async (scope) => ({
      scope,
      key: (await createApiKey(tenant.orgId, [scope])).key,
    })),
  );
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
  credentials = [
    { kind: 'apiKey', headers: bearer(tenant.apiKey) },
    { kind: 'operator', headers: bearer(tenant.adminSession) },
    { kind: 'visitor', headers: bearer(visitor.token) },
    { kind: 'platform', headers: bearer(platformToken()) },
    { kind: 'widget', headers: { 'X-Widget-Key': tenant.widgetKey } },
  ];
});

const routes = allRoutes().filter((route) => !route.callers.includes('public'));
const pathOf = (template: string) => template.replace(/\{[^}]+\}/g, '00000000-0000-7000-8000-000000000000');
const bodyOf = (method: string) => (method === 'GET' ? undefined : {});

describe.each(routes.map((route) => [`${route.method} ${route.path}`, route] as const))(
  '%s',
  (_name, route) => {
    it('refuses credential kinds it does not admit and admits the others', async () => {
      for (const credential of credentials) {
        const response = await call(route.method, pathOf(route.path), {
          headers: credential.headers,
          body: bodyOf(route.method),
        });
        if (route.callers.includes(credential.kind)) {
          expect([401, 402, 403], `${credential.kind}: ${response.text}`).not.toContain(response.status);
        } else {
          expect(response.status, `${credential.kind}: ${response.text}`).toBe(403);
        }
      }
    });

    it('needs a credential at all', async () => {
      expect((await call(route.method, pathOf(route.path), { body: bodyOf(route.method) })).status).toBe(401);
    });
  },
);

const scoped = routes.filter((route) => route.scope !== undefined && route.callers.includes('apiKey'));

describe.each(scoped.map((route) => [`${route.method} ${route.path}`, route] as const))(
  '%s with a restricted key',
  (_name, route) => {
    it('needs its scope', async () => {
      const other = restricted.find((candidate) => candidate.scope !== route.scope);
      const response = await call(route.method, pathOf(route.path), {
        token: other?.key,
        body: bodyOf(route.method),
      });
      expect(response.status).toBe(403);
      expect(response.body).toMatchObject({ error: { details: { requiredScope: route.scope } } });
    });
  },
);
