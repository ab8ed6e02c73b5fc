import { describe, expect, it } from 'vitest';
import { call, createTenant, platformToken } from '../helpers/api';

const admin = () => ({ token: platformToken() });

describe('organizations', () => {
  it('are created with defaults and a public widget key, and read back', async () => {
    const created = await call<Record<string, unknown> & { id: string; widgetKey: string }>(
      'POST',
      '/api/admin/organizations',
      {
        ...admin(),
        body: { name: 'Acme' },
      },
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Acme',
      modules: [],
      locales: ['en'],
      defaultLocale: 'en',
      historyWindowDays: null,
    });
    expect(created.body.widgetKey.startsWith('svc_wpk_')).toBe(true);
    expect(created.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const read = await call('GET', `/api/admin/organizations/${created.body.id}`, admin());
    expect(read.body).toEqual(created.body);
  });

  it('keep the default locale among the locales (422 otherwise) and accept only BCP 47 tags', async () => {
    const mismatch = await call<{ error: { details: { field: string } } }>(
      'POST',
      '/api/admin/organizations',
      {
        ...admin(),
        body: { name: 'Acme', locales: ['en', 'fr'], defaultLocale: 'de' },
      },
    );
    expect(mismatch.status).toBe(422);
    expect(mismatch.body.error.details.field).toBe('defaultLocale');
    const badTag = await call<{ error: { details: { field: string } } }>('POST', '/api/admin/organizations', {
      ...admin(),
      body: { name: 'Acme', locales: ['en_US'] },
    });
    expect(badTag.status).toBe(422);
    expect(badTag.body.error.details.field).toBe('locales.0');
  });

  it('are updated field by field, and the change reaches credentials at once', async () => {
    const tenant = await createTenant({ modules: [] });
    expect((await call('GET', '/api/me', { token: tenant.apiKey })).status).toBe(402);
    const patched = await call<{
      modules: string[];
      name: string;
      chatbot: { enabled: boolean; knowledgeThreshold: number };
    }>('PATCH', `/api/admin/organizations/${tenant.orgId}`, {
      ...admin(),
      body: { modules: ['automation_api'], chatbot: { enabled: true } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.name).toBe('Test org');
    expect(patched.body.chatbot).toMatchObject({ enabled: true, knowledgeThreshold: 0.35 });
    expect((await call('GET', '/api/me', { token: tenant.apiKey })).status).toBe(200);
  });

  it('that do not exist are 404 for every provisioning call', async () => {
    const missing = crypto.randomUUID();
    expect((await call('GET', `/api/admin/organizations/${missing}`, admin())).status).toBe(404);
    expect(
      (await call('PATCH', `/api/admin/organizations/${missing}`, { ...admin(), body: { name: 'x' } }))
        .status,
    ).toBe(404);
    expect(
      (
        await call('POST', `/api/admin/organizations/${missing}/api-keys`, {
          ...admin(),
          body: { name: 'k' },
        })
      ).status,
    ).toBe(404);
    const operator = await call('POST', `/api/admin/organizations/${missing}/operators`, {
      ...admin(),
      body: { name: 'A', email: 'a@example.com', role: 'admin' },
    });
    expect(operator.status).toBe(404);
  });
});

describe('API keys, operators and sessions', () => {
  it('show the key once and never again', async () => {
    const tenant = await createTenant();
    const created = await call<{ id: string; key: string; scopes: string[] }>(
      'POST',
      `/api/admin/organizations/${tenant.orgId}/api-keys`,
      {
        ...admin(),
        body: { name: 'ci', scopes: ['conversations:read', 'conversations:read'] },
      },
    );
    expect(created.status).toBe(201);
    expect(created.body.key.startsWith('svc_sk_')).toBe(true);
    expect(created.body.scopes).toEqual(['conversations:read']);
    const org = await call('GET', `/api/admin/organizations/${tenant.orgId}`, admin());
    expect(org.text).not.toContain(created.body.key);
  });

  it('make operator e-mails unique per organization (409) and sessions carry the role', async () => {
    const tenant = await createTenant();
    const body = { name: 'Lin', email: 'Lin@Example.com', role: 'operator' };
    const first = await call<{ id: string; email: string; orgId: string }>(
      'POST',
      `/api/admin/organizations/${tenant.orgId}/operators`,
      {
        ...admin(),
        body,
      },
    );
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ email: 'lin@example.com', orgId: tenant.orgId, role: 'operator' });
    const duplicate = await call('POST', `/api/admin/organizations/${tenant.orgId}/operators`, {
      ...admin(),
      body: { ...body, email: 'lin@example.com' },
    });
    expect(duplicate.status).toBe(409);
    const session = await call<{ token: string; expiresAt: string }>(
      'POST',
      `/api/admin/organizations/${tenant.orgId}/operators/${first.body.id}/sessions`,
      admin(),
    );
    expect(session.status).toBe(201);
    expect(session.body.token.startsWith('svc_os_')).toBe(true);
    expect(Date.parse(session.body.expiresAt)).toBeGreaterThan(Date.now());
    const missingOperator = await call(
      'POST',
      `/api/admin/organizations/${tenant.orgId}/operators/${crypto.randomUUID()}/sessions`,
      admin(),
    );
    expect(missingOperator.status).toBe(404);
  });
});
