import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { parseOrgToken } from '../../shared/auth/tokens';
import { keys } from '../../shared/db/keys';
import { call, createTenant, createVisitor, platformToken, type Tenant } from '../helpers/api';

/**
 * Impersonation: the platform admin acts as an operator through a session in the
 * `svc_impersonation` cookie; every use is audited with the platform as the actor, and stopping
 * ends the session server-side.
 */
interface AuditEntry {
  type: string;
  actor: { type: string; id: string; name?: string };
  impersonatedBy: string | null;
  target: { type: string; id: string };
  details: { impersonatedOperatorId?: string; sessionId?: string; requestId?: string };
}

let tenant: Tenant;
let table: DynamoDBDocumentClient;

beforeAll(async () => {
  tenant = await createTenant();
  table = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: inject('endpoints').dynamodb }));
});

/** The organization's audit trail, oldest first, as stored. */
async function auditOf(orgId: string): Promise<AuditEntry[]> {
  const { Items = [] } = await table.send(
    new QueryCommand({
      TableName: inject('tableName'),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.orgAuditPartition(orgId) },
      ConsistentRead: true,
    }),
  );
  return Items as AuditEntry[];
}

const impersonate = (operatorId: string, headers: Record<string, string> = {}) =>
  call<{ success: boolean; expiresAt: string }>('POST', `/api/admin/users/${operatorId}/impersonate`, {
    token: platformToken(),
    headers,
  });

/** A new operator of the tenant, made by the platform admin; its id. */
async function newOperator(): Promise<string> {
  const created = await call<{ id: string }>('POST', `/api/admin/organizations/${tenant.orgId}/operators`, {
    token: platformToken(),
    body: { name: 'New Hire', email: `new-${crypto.randomUUID()}@example.com`, role: 'operator' },
  });
  expect(created.status, created.text).toBe(201);
  return created.body.id;
}

/** The answer started an impersonation of `operatorId`: its session acts, and the start is audited. */
async function expectImpersonating(
  started: Awaited<ReturnType<typeof impersonate>>,
  operatorId: string,
): Promise<void> {
  const token = cookieOf(started.headers.get('set-cookie')).value;
  const me = await call<{ organizationId: string; callerType: string }>('GET', '/api/me', { token });
  expect(me.status, me.text).toBe(200);
  expect(me.body).toMatchObject({ organizationId: tenant.orgId, callerType: 'operator' });
  const trail = await auditOf(tenant.orgId);
  expect(
    trail.some((entry) => entry.type === 'impersonation.started' && entry.target.id === operatorId),
  ).toBe(true);
}

/** The session token and attributes of a `svc_impersonation` Set-Cookie header. */
function cookieOf(header: string | null) {
  const [pair = '', ...attributes] = (header ?? '').split(';').map((part) => part.trim());
  const [name, value] = pair.split('=');
  return { name, value: value ?? '', attributes };
}

describe('POST /api/admin/users/{id}/impersonate', () => {
  it('sets an operator session of at most 1 h in an HttpOnly, Secure, SameSite=Strict cookie', async () => {
    const before = Date.now();

    const response = await impersonate(tenant.operatorId);

    expect(response.status, response.text).toBe(200);
    expect(response.body.success).toBe(true);
    const expiresAt = Date.parse(response.body.expiresAt);
    expect(expiresAt).toBeGreaterThan(before);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 3_600_000);
    const cookie = cookieOf(response.headers.get('set-cookie'));
    expect(cookie.name).toBe('svc_impersonation');
    expect(cookie.value).toMatch(/^svc_os_[A-Za-z0-9_-]+$/);
    expect(cookie.attributes).toEqual(
      expect.arrayContaining(['HttpOnly', 'Secure', 'SameSite=Strict', 'Path=/', 'Max-Age=3600']),
    );
    // The session token is in the cookie only.
    expect(response.text).not.toContain(cookie.value);
  });

  it('acts as that operator, with its role, and audits every request with the platform as actor', async () => {
    const started = await impersonate(tenant.operatorId);
    const token = cookieOf(started.headers.get('set-cookie')).value;
    const visitor = await createVisitor(tenant.widgetKey);

    const me = await call<{ callerType: string }>('GET', '/api/me', { token });
    const created = await call<{ id: string }>('POST', '/api/conversations', {
      token,
      body: { visitorId: visitor.visitor.id, title: 'Opened while impersonating' },
    });
    const adminOnly = await call('PUT', '/api/chatbot/config', { token, body: { enabled: true } });

    expect(me.status).toBe(200);
    expect(me.body.callerType).toBe('operator');
    expect(created.status).toBe(201);
    // The operator is not an admin, and neither is whoever acts as them.
    expect(adminOnly.status).toBe(403);
    const trail = await auditOf(tenant.orgId);
    const requests = trail.filter((entry) => entry.type === 'impersonation.request');
    expect(requests.map((entry) => entry.target.id)).toEqual(
      expect.arrayContaining(['GET /api/me', 'POST /api/conversations', 'PUT /api/chatbot/config']),
    );
    // The session's id is inside its token (organization credentials carry their own id).
    const sessionId = parseOrgToken(token)?.credentialId;
    expect(
      trail.some((entry) => entry.type === 'impersonation.started' && entry.details.sessionId === sessionId),
    ).toBe(true);
    // What is done under impersonation is the operator's action, marked with who impersonated.
    for (const entry of requests) {
      expect(entry.actor).toEqual({ type: 'operator', id: tenant.operatorId });
      expect(entry.impersonatedBy).toBe('platform-admin');
      expect(entry.details.impersonatedOperatorId).toBe(tenant.operatorId);
      expect(entry.details.requestId).toBeTruthy();
    }
    expect(requests.filter((entry) => entry.details.sessionId === sessionId)).toHaveLength(3);
    expect(
      trail
        .filter((entry) => entry.type === 'impersonation.started')
        .every((entry) => entry.actor.type === 'platform'),
    ).toBe(true);
  });

  it('is 404 for a visitor id, an unknown id or a malformed one, and 403 for organization credentials', async () => {
    const visitor = await createVisitor(tenant.widgetKey);

    const ofVisitor = await impersonate(visitor.visitor.id);
    const unknown = await impersonate(crypto.randomUUID());
    const malformed = await impersonate('not-an-id');
    const withKey = await call('POST', `/api/admin/users/${tenant.operatorId}/impersonate`, {
      token: tenant.apiKey,
    });

    expect([ofVisitor.status, unknown.status, malformed.status]).toEqual([404, 404, 404]);
    expect(ofVisitor.headers.get('set-cookie')).toBeNull();
    expect(withKey.status).toBe(403);
  });

  it('impersonates an operator created a moment before', async () => {
    const operator = await newOperator();

    // Right after, as the admin would from the answer.
    const started = await impersonate(operator);

    expect(started.status, started.text).toBe(200);
    await expectImpersonating(started, operator);
  });

  it('impersonates an operator whose id the lookup index shows a moment late', async () => {
    const operator = await newOperator();
    // The operator's lookup entry (gsi1) as a lagging index shows it: not yet, then, a moment later
    // (well within the contract's 2 s), there.
    const Key = keys.operator(tenant.orgId, operator);
    const lookup = keys.operatorLookup(operator);
    await table.send(
      new UpdateCommand({ TableName: inject('tableName'), Key, UpdateExpression: 'REMOVE gsi1pk, gsi1sk' }),
    );
    const starting = impersonate(operator);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await table.send(
      new UpdateCommand({
        TableName: inject('tableName'),
        Key,
        UpdateExpression: 'SET gsi1pk = :pk, gsi1sk = :sk',
        ExpressionAttributeValues: { ':pk': lookup.gsi1pk, ':sk': lookup.gsi1sk },
      }),
    );
    const started = await starting;

    expect(started.status, started.text).toBe(200);
    await expectImpersonating(started, operator);
  });

  it('finds operators of any organization', async () => {
    const other = await createTenant();

    const response = await impersonate(other.adminOperatorId);
    const token = cookieOf(response.headers.get('set-cookie')).value;
    const adminOnly = await call('PUT', '/api/chatbot/config', { token, body: { enabled: false } });

    expect(response.status).toBe(200);
    expect(adminOnly.status).toBe(200);
    const trail = await auditOf(other.orgId);
    expect(trail.some((entry) => entry.target.id === 'PUT /api/chatbot/config')).toBe(true);
    // The change itself is recorded too, under its own type, marked as impersonated.
    expect(trail.find((entry) => entry.type === 'chatbot.config_updated')?.impersonatedBy).toBe(
      'platform-admin',
    );
  });
});

describe('POST /api/admin/users/stop-impersonation', () => {
  it('ends the session server-side, audits it and clears the cookie', async () => {
    const started = await impersonate(tenant.operatorId);
    const token = cookieOf(started.headers.get('set-cookie')).value;
    expect((await call('GET', '/api/me', { token })).status).toBe(200);

    const stopped = await call('POST', '/api/admin/users/stop-impersonation', {
      token: platformToken(),
      headers: { Cookie: `theme=dark; svc_impersonation=${token}` },
    });

    expect(stopped.status, stopped.text).toBe(200);
    expect(stopped.body).toEqual({ success: true });
    const cleared = cookieOf(stopped.headers.get('set-cookie'));
    expect(cleared.name).toBe('svc_impersonation');
    expect(cleared.value).toBe('');
    expect(cleared.attributes).toEqual(
      expect.arrayContaining(['HttpOnly', 'Secure', 'SameSite=Strict', 'Path=/', 'Max-Age=0']),
    );
    // Ended server-side: the token no longer works, whoever still holds it.
    const after = await call('GET', '/api/me', { token });
    expect(after.status).toBe(401);
    const stoppedEntries = (await auditOf(tenant.orgId)).filter(
      (entry) => entry.type === 'impersonation.stopped',
    );
    expect(stoppedEntries.at(-1)?.actor).toMatchObject({ type: 'platform', id: 'platform-admin' });
  });

  it('clears the cookie and succeeds without a session to end, and never ends an ordinary session', async () => {
    const none = await call('POST', '/api/admin/users/stop-impersonation', { token: platformToken() });
    const ordinary = await call('POST', '/api/admin/users/stop-impersonation', {
      token: platformToken(),
      headers: { Cookie: `svc_impersonation=${tenant.operatorSession}` },
    });

    expect(none.status).toBe(200);
    expect(cookieOf(none.headers.get('set-cookie')).attributes).toContain('Max-Age=0');
    expect(ordinary.status).toBe(200);
    expect((await call('GET', '/api/me', { token: tenant.operatorSession })).status).toBe(200);
  });

  it('ends the previous session when a new impersonation starts with its cookie', async () => {
    const first = cookieOf((await impersonate(tenant.operatorId)).headers.get('set-cookie')).value;

    const second = await impersonate(tenant.adminOperatorId, { Cookie: `svc_impersonation=${first}` });

    expect(second.status).toBe(200);
    expect((await call('GET', '/api/me', { token: first })).status).toBe(401);
    const next = cookieOf(second.headers.get('set-cookie')).value;
    expect((await call('GET', '/api/me', { token: next })).status).toBe(200);
  });
});
