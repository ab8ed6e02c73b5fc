import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiResponse,
  call,
  createApiKey,
  createTenant,
  createVisitor,
  platformToken,
  type Tenant,
} from '../helpers/api';
import { eventuallyIndexed } from '../helpers/indexed';

type ErrorBody = {
  error: { code: string; message: string; details?: Record<string, unknown>; correlationId: string };
};

function expectError(response: ApiResponse<unknown>, status: number, code: string): ErrorBody['error'] {
  expect(response.status, response.text).toBe(status);
  const { error } = response.body as ErrorBody;
  expect(error.code).toBe(code);
  expect(error.correlationId).toBe(response.headers.get('x-request-id'));
  return error;
}

let tenant: Tenant;

beforeAll(async () => {
  tenant = await createTenant();
});

describe('API keys', () => {
  it('accept Authorization: Bearer and X-API-Key alike', async () => {
    const bearer = await call('GET', '/api/me', { token: tenant.apiKey });
    const header = await call('GET', '/api/me', { headers: { 'X-API-Key': tenant.apiKey } });
    expect(bearer.status).toBe(200);
    expect(header.status).toBe(200);
    expect(header.body).toEqual(bearer.body);
  });

  it('are refused when missing, unknown, malformed or sent twice (401)', async () => {
    expectError(await call('GET', '/api/me'), 401, 'UNAUTHORIZED');
    expectError(await call('GET', '/api/me', { token: 'svc_sk_not-a-real-key' }), 401, 'UNAUTHORIZED');
    const forged = `${tenant.apiKey.slice(0, -4)}AAAA`;
    expectError(await call('GET', '/api/me', { token: forged }), 401, 'UNAUTHORIZED');
    expectError(
      await call('GET', '/api/me', { headers: { Authorization: 'Basic abc' } }),
      401,
      'UNAUTHORIZED',
    );
    // Two different credentials at once: which one would act is not for the service to guess.
    const other = await createApiKey(tenant.orgId, []);
    expectError(
      await call('GET', '/api/me', { token: tenant.apiKey, headers: { 'X-API-Key': other.key } }),
      401,
      'UNAUTHORIZED',
    );
  });

  it('accept the same key in both headers, as SDKs that fill every security scheme send it', async () => {
    const both = await call('GET', '/api/me', {
      token: tenant.apiKey,
      headers: { 'X-API-Key': tenant.apiKey },
    });
    expect(both.status).toBe(200);
    expect(both.body).toEqual((await call('GET', '/api/me', { token: tenant.apiKey })).body);
  });

  it('stop working once revoked, and revoking twice is 404', async () => {
    const key = await createApiKey(tenant.orgId, []);
    expect((await call('GET', '/api/me', { token: key.key })).status).toBe(200);
    const path = `/api/admin/organizations/${tenant.orgId}/api-keys/${key.id}`;
    const revoked = await call('DELETE', path, { token: platformToken() });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ success: true });
    expectError(await call('GET', '/api/me', { token: key.key }), 401, 'UNAUTHORIZED');
    expectError(await call('DELETE', path, { token: platformToken() }), 404, 'NOT_FOUND');
  });

  it('need the automation_api module (402 with details); sessions and visitor tokens do not', async () => {
    const withoutModule = await createTenant({ modules: [] });
    const error = expectError(
      await call('GET', '/api/conversations', { token: withoutModule.apiKey }),
      402,
      'INTEGRATION_MODULE_REQUIRED',
    );
    expect(error.details).toEqual({ module: 'automation_api', feature: 'public_api' });
    expect((await call('GET', '/api/conversations', { token: withoutModule.operatorSession })).status).toBe(
      200,
    );
    const visitor = await createVisitor(withoutModule.widgetKey);
    expect((await call('GET', '/api/conversations', { token: visitor.token })).status).toBe(200);
  });

  it('with scopes reach only their scopes (403 otherwise); an unrestricted key reaches all', async () => {
    const readOnly = await createApiKey(tenant.orgId, ['conversations:read']);
    const unrelated = await createApiKey(tenant.orgId, ['webhooks:read']);
    expect((await call('GET', '/api/conversations', { token: readOnly.key })).status).toBe(200);
    const error = expectError(
      await call('POST', '/api/conversations', { token: readOnly.key, body: {} }),
      403,
      'FORBIDDEN',
    );
    expect(error.details).toEqual({ requiredScope: 'conversations:write' });
    expectError(await call('GET', '/api/conversations', { token: unrelated.key }), 403, 'FORBIDDEN');
    // No scope is needed to ask who you are.
    const me = await call<{ scopes: string[]; callerType: string }>('GET', '/api/me', {
      token: unrelated.key,
    });
    expect(me.body).toMatchObject({ callerType: 'api_key', scopes: ['webhooks:read'] });
  });

  it('cannot be created with a scope that does not exist (422)', async () => {
    const response = await call('POST', `/api/admin/organizations/${tenant.orgId}/api-keys`, {
      token: platformToken(),
      body: { name: 'bad', scopes: ['conversations:admin'] },
    });
    const error = expectError(response, 422, 'VALIDATION_ERROR');
    expect(error.details?.field).toBe('scopes.0');
  });
});

describe('operator sessions, visitor tokens, widget keys and the platform token', () => {
  it('describe themselves through GET /api/me', async () => {
    const visitor = await createVisitor(tenant.widgetKey);
    const operator = await call<{ callerType: string; scopes: string[]; organizationId: string }>(
      'GET',
      '/api/me',
      {
        token: tenant.operatorSession,
      },
    );
    expect(operator.body.callerType).toBe('operator');
    expect(operator.body.organizationId).toBe(tenant.orgId);
    expect(operator.body.scopes).toContain('conversations:write');
    const asVisitor = await call('GET', '/api/me', { token: visitor.token });
    expect(asVisitor.body).toEqual({
      organizationId: tenant.orgId,
      callerType: 'visitor',
      scopes: [],
      modules: ['automation_api'],
    });
  });

  it('keep to their own side: platform token on organization endpoints and organization credentials on platform endpoints are 403', async () => {
    expectError(await call('GET', '/api/conversations', { token: platformToken() }), 403, 'FORBIDDEN');
    for (const token of [tenant.apiKey, tenant.adminSession]) {
      expectError(await call('GET', `/api/admin/organizations/${tenant.orgId}`, { token }), 403, 'FORBIDDEN');
    }
    expectError(
      await call('GET', `/api/admin/organizations/${tenant.orgId}`, { token: 'svc_pa_wrong' }),
      401,
      'UNAUTHORIZED',
    );
  });

  it('widget keys only bootstrap visitors, and only from X-Widget-Key', async () => {
    expectError(await call('POST', '/api/widget/visitors', { body: {} }), 401, 'UNAUTHORIZED');
    expectError(
      await call('GET', '/api/me', { headers: { 'X-Widget-Key': tenant.widgetKey } }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await call('POST', '/api/widget/visitors', { token: tenant.widgetKey, body: {} }),
      401,
      'UNAUTHORIZED',
    );
    expectError(
      await call('POST', '/api/widget/visitors', { token: tenant.apiKey, body: {} }),
      403,
      'FORBIDDEN',
    );
    const created = await call<{
      visitor: { id: string; identifier: string; totalSessions: number };
      token: string;
    }>('POST', '/api/widget/visitors', {
      headers: { 'X-Widget-Key': tenant.widgetKey },
      body: { identifier: 'grace@example.com', metadata: { plan: 'pro' } },
    });
    expect(created.status).toBe(201);
    expect(created.body.token.startsWith('svc_vt_')).toBe(true);
    expect(created.body.visitor).toMatchObject({
      identifier: 'grace@example.com',
      totalSessions: 1,
      metadata: { plan: 'pro' },
    });
  });

  it('work the moment they are made: a new organization, its operator’s login, a visitor and its conversation', async () => {
    // Each step right after the one before, as a dashboard or a widget goes through them: every
    // one reads by id what the previous one just wrote.
    const admin = platformToken();
    const org = await call<{ id: string; widgetKey: string }>('POST', '/api/admin/organizations', {
      token: admin,
      body: { name: 'Fresh org', modules: ['automation_api'] },
    });
    expect(org.status, org.text).toBe(201);
    expect((await call('GET', `/api/admin/organizations/${org.body.id}`, { token: admin })).status).toBe(200);
    const operator = await call<{ id: string }>('POST', `/api/admin/organizations/${org.body.id}/operators`, {
      token: admin,
      body: { name: 'First', email: `first-${crypto.randomUUID()}@example.com`, role: 'admin' },
    });
    expect(operator.status, operator.text).toBe(201);
    const login = await call<{ token: string }>(
      'POST',
      `/api/admin/organizations/${org.body.id}/operators/${operator.body.id}/sessions`,
      { token: admin },
    );
    expect(login.status, login.text).toBe(201);
    const me = await call<{ organizationId: string }>('GET', '/api/me', { token: login.body.token });
    expect(me.status, me.text).toBe(200);
    expect(me.body.organizationId).toBe(org.body.id);
    const visitor = await call<{ visitor: { id: string }; token: string }>('POST', '/api/widget/visitors', {
      headers: { 'X-Widget-Key': org.body.widgetKey },
      body: {},
    });
    expect(visitor.status, visitor.text).toBe(201);
    const own = await call('POST', '/api/conversations', {
      token: visitor.body.token,
      body: { message: 'hello right away' },
    });
    expect(own.status, own.text).toBe(201);
    const started = await call<{ visitorId: string }>('POST', '/api/conversations', {
      token: login.body.token,
      body: { visitorId: visitor.body.visitor.id },
    });
    expect(started.status, started.text).toBe(201);
    expect(started.body.visitorId).toBe(visitor.body.visitor.id);
  });

  it('visitors see only their own conversations', async () => {
    const ada = await createVisitor(tenant.widgetKey);
    const bob = await createVisitor(tenant.widgetKey);
    const mine = await call<{ id: string; source: string; visitorId: string }>('POST', '/api/conversations', {
      token: ada.token,
      body: { message: 'Hi, I am Ada' },
    });
    expect(mine.status).toBe(201);
    expect(mine.body).toMatchObject({ source: 'widget', visitorId: ada.visitor.id });
    expect((await call('GET', `/api/conversations/${mine.body.id}`, { token: ada.token })).status).toBe(200);
    expectError(
      await call('GET', `/api/conversations/${mine.body.id}`, { token: bob.token }),
      404,
      'NOT_FOUND',
    );
    // Listings read an index, which may show the conversation up to 2 s later: once Ada's shows
    // it, Bob's listings are asked (an empty one then proves more than one read before it showed).
    const adasList = await eventuallyIndexed(
      () => call<{ data: { id: string }[] }>('GET', '/api/conversations', { token: ada.token }),
      (answer) => answer.body.data.length > 0,
    );
    expect(adasList.body.data.map((c) => c.id)).toEqual([mine.body.id]);
    const bobsList = await call<{ data: unknown[] }>('GET', '/api/conversations', { token: bob.token });
    expect(bobsList.body.data).toEqual([]);
    const snooping = await call<{ data: unknown[] }>(
      'GET',
      `/api/conversations?visitorId=${ada.visitor.id}`,
      { token: bob.token },
    );
    expect(snooping.body.data).toEqual([]);
    const impersonating = await call('POST', '/api/conversations', {
      token: bob.token,
      body: { visitorId: ada.visitor.id },
    });
    expect(expectError(impersonating, 422, 'VALIDATION_ERROR').details?.field).toBe('visitorId');
  });
});
