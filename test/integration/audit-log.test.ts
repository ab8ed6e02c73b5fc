import { beforeAll, describe, expect, inject, it } from 'vitest';
import { call, createApiKey, createTenant, createVisitor, platformToken, type Tenant } from '../helpers/api';

/**
 * The audit log (`GET /api/audit-events`): what the contract lists is recorded with the action,
 * newest first, filterable, impersonated actions marked; administrators only.
 */
interface AuditEvent {
  id: string;
  type: string;
  at: string;
  actor: { type: string; id: string; name: string | null };
  impersonatedBy: string | null;
  target: { type: string; id: string };
  details: Record<string, unknown>;
}
interface Page {
  data: AuditEvent[];
  nextCursor: string | null;
}

let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  [tenant, other] = await Promise.all([createTenant(), createTenant()]);
});

const hookUrl = () => `http://127.0.0.1:${inject('webhookTestPorts').at(-1)}/audit`;

const audit = (token: string, query = '') => call<Page>('GET', `/api/audit-events${query}`, { token });

async function createWebhook(token: string) {
  const response = await call<{ id: string }>('POST', '/api/webhooks', {
    token,
    // An admitted development target: nothing listens there, and nothing is delivered in this file.
    body: { url: hookUrl(), events: ['conversation.created'] },
  });
  expect(response.status, response.text).toBe(201);
  return response.body.id;
}

describe('GET /api/audit-events', () => {
  it('records provisioning: key and operator creation, key revocation, with the platform as actor', async () => {
    const key = await createApiKey(tenant.orgId, ['conversations:read']);
    const revoked = await call('DELETE', `/api/admin/organizations/${tenant.orgId}/api-keys/${key.id}`, {
      token: platformToken(),
    });
    expect(revoked.status).toBe(200);

    const page = await audit(tenant.apiKey, `?targetId=${key.id}`);

    expect(page.status, page.text).toBe(200);
    expect(page.body.data.map((entry) => entry.type)).toEqual(['api_key.revoked', 'api_key.created']);
    expect(page.body.data[0]?.actor).toEqual({
      type: 'platform',
      id: 'platform-admin',
      name: expect.any(String),
    });
    const operators = await audit(tenant.apiKey, '?type=operator.created');
    expect(operators.body.data.map((entry) => entry.target.id)).toEqual(
      expect.arrayContaining([tenant.operatorId, tenant.adminOperatorId]),
    );
  });

  it('records every webhook change, newest first, readable as soon as the answer is sent', async () => {
    const id = await createWebhook(tenant.adminSession);
    await call('PATCH', `/api/webhooks/${id}`, { token: tenant.adminSession, body: { active: false } });
    await call('POST', `/api/webhooks/${id}/rotate-secret`, { token: tenant.apiKey });
    await call('DELETE', `/api/webhooks/${id}`, { token: tenant.apiKey });

    const page = await audit(tenant.adminSession, `?targetType=webhook&targetId=${id}`);

    expect(page.body.data.map((entry) => entry.type)).toEqual([
      'webhook.deleted',
      'webhook.secret_rotated',
      'webhook.updated',
      'webhook.created',
    ]);
    const created = page.body.data.at(-1);
    expect(created?.actor).toEqual({ type: 'operator', id: tenant.adminOperatorId, name: 'admin one' });
    expect(created?.impersonatedBy).toBeNull();
    expect(created?.details).toMatchObject({ url: hookUrl() });
    expect(page.body.data[0]?.actor).toMatchObject({ type: 'api_key', name: 'test' });
    expect(page.body.data[2]?.details).toEqual({ active: false });
  });

  it('records bulk closes and deletes, note deletions, custom-field deletions and chatbot changes', async () => {
    const visitor = await createVisitor(tenant.widgetKey);
    const conversation = await call<{ id: string }>('POST', '/api/conversations', {
      token: visitor.token,
      body: { message: 'hello' },
    });
    expect(conversation.status, conversation.text).toBe(201);
    const id = conversation.body.id;
    const note = await call<{ id: string }>('POST', `/api/conversations/${id}/notes`, {
      token: tenant.apiKey,
      body: { content: 'to delete' },
    });
    await call('DELETE', `/api/conversations/${id}/notes/${note.body.id}`, { token: tenant.apiKey });
    await call('POST', '/api/conversations/bulk-close', {
      token: tenant.apiKey,
      body: { conversationIds: [id] },
    });
    await call('POST', '/api/conversations/bulk-delete', {
      token: tenant.apiKey,
      body: { conversationIds: [id] },
    });
    const field = await call<{ id: string }>('POST', '/api/custom-fields', {
      token: tenant.apiKey,
      body: {
        name: `audited_${crypto.randomUUID().replaceAll('-', '')}`,
        type: 'text',
        translations: [{ locale: 'en', status: 'published', label: 'Audited' }],
      },
    });
    expect(field.status, field.text).toBe(201);
    await call('DELETE', `/api/custom-fields/${field.body.id}`, { token: tenant.apiKey });
    const chatbot = await call('PUT', '/api/chatbot/config', {
      token: tenant.apiKey,
      body: { enabled: false },
    });
    expect(chatbot.status, chatbot.text).toBe(200);

    const types = (await audit(tenant.apiKey, '?limit=100')).body.data.map((entry) => entry.type);

    for (const type of [
      'note.deleted',
      'conversation.bulk_closed',
      'conversation.bulk_deleted',
      'custom_field.deleted',
      'chatbot.config_updated',
    ])
      expect(types).toContain(type);
    const bulk = await audit(tenant.apiKey, '?type=conversation.bulk_deleted');
    expect(bulk.body.data[0]?.details).toEqual({ conversationIds: [id] });
  });

  it('marks what is done under impersonation with impersonatedBy, the operator as the actor', async () => {
    const started = await call('POST', `/api/admin/users/${tenant.adminOperatorId}/impersonate`, {
      token: platformToken(),
    });
    expect(started.status, started.text).toBe(200);
    const cookie = (started.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const session = cookie.split('=')[1] ?? '';
    const id = await createWebhook(session);
    await call('POST', '/api/admin/users/stop-impersonation', {
      token: platformToken(),
      headers: { Cookie: cookie },
    });

    const created = (await audit(tenant.apiKey, `?targetId=${id}`)).body.data[0];
    const lifecycle = (await audit(tenant.apiKey, '?actorType=platform')).body.data.map(
      (entry) => entry.type,
    );

    expect(created).toMatchObject({
      type: 'webhook.created',
      actor: { type: 'operator', id: tenant.adminOperatorId },
      impersonatedBy: 'platform-admin',
    });
    expect(lifecycle).toEqual(expect.arrayContaining(['impersonation.started', 'impersonation.stopped']));
  });

  it('marks a note deleted under impersonation with impersonatedBy', async () => {
    const visitor = await createVisitor(tenant.widgetKey);
    const conversation = await call<{ id: string }>('POST', '/api/conversations', {
      token: visitor.token,
      body: { message: 'Hello' },
    });
    expect(conversation.status, conversation.text).toBe(201);
    const started = await call('POST', `/api/admin/users/${tenant.adminOperatorId}/impersonate`, {
      token: platformToken(),
    });
    expect(started.status, started.text).toBe(200);
    const cookie = (started.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const session = cookie.split('=')[1] ?? '';
    const notes = `/api/conversations/${conversation.body.id}/notes`;
    const note = await call<{ id: string }>('POST', notes, {
      token: session,
      body: { content: 'Check the order' },
    });
    expect(note.status, note.text).toBe(201);
    const deleted = await call('DELETE', `${notes}/${note.body.id}`, { token: session });
    expect(deleted.status, deleted.text).toBe(200);
    await call('POST', '/api/admin/users/stop-impersonation', {
      token: platformToken(),
      headers: { Cookie: cookie },
    });

    const entry = (await audit(tenant.apiKey, `?targetId=${note.body.id}`)).body.data.find(
      (each) => each.type === 'note.deleted',
    );
    expect(entry).toMatchObject({
      actor: { type: 'operator', id: tenant.adminOperatorId },
      impersonatedBy: 'platform-admin',
    });
  });

  it('pages with a cursor, filters by time (since inclusive, until exclusive) and by actor', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await createWebhook(other.apiKey));
    const all = (await audit(other.apiKey, '?type=webhook.created')).body.data;
    expect(all.map((entry) => entry.target.id)).toEqual([...ids].reverse());

    const first = await audit(other.apiKey, '?type=webhook.created&limit=2');
    expect(first.body.data).toHaveLength(2);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await audit(
      other.apiKey,
      `?type=webhook.created&limit=2&cursor=${encodeURIComponent(first.body.nextCursor ?? '')}`,
    );
    expect([...first.body.data, ...second.body.data].map((entry) => entry.id)).toEqual(all.map((e) => e.id));
    expect(second.body.nextCursor).toBeNull();

    const middle = all[1] as AuditEvent;
    const since = await audit(other.apiKey, `?type=webhook.created&since=${middle.at}`);
    expect(since.body.data.map((entry) => entry.id)).toContain(middle.id);
    const until = await audit(other.apiKey, `?type=webhook.created&until=${middle.at}`);
    expect(until.body.data.map((entry) => entry.id)).not.toContain(middle.id);
    const byActor = await audit(other.apiKey, '?actorType=operator&type=webhook.created');
    expect(byActor.body.data).toEqual([]);
  });

  it('is for administrators: operators, visitors and keys without audit:read are refused', async () => {
    const visitor = await createVisitor(tenant.widgetKey);
    const reader = await createApiKey(tenant.orgId, ['audit:read']);
    const stranger = await createApiKey(tenant.orgId, ['webhooks:read']);

    expect((await audit(tenant.operatorSession)).status).toBe(403);
    expect((await audit(visitor.token)).status).toBe(403);
    expect((await audit(stranger.key)).status).toBe(403);
    expect((await audit(reader.key)).status).toBe(200);
  });

  it('keeps organizations apart, and refuses a cursor of another organization', async () => {
    const mine = await audit(tenant.apiKey, '?limit=1');
    const theirs = await audit(other.apiKey, '?limit=100');
    expect(theirs.body.data.map((entry) => entry.id)).not.toContain(mine.body.data[0]?.id);
    const foreign = await audit(
      other.apiKey,
      `?limit=1&cursor=${encodeURIComponent(mine.body.nextCursor ?? 'x.y')}`,
    );
    expect(foreign.status).toBe(400);
  });

  it('records AI provider changes in the platform log, which only the platform admin reads', async () => {
    const created = await call<{ id: string }>('POST', '/api/admin/ai-providers', {
      token: platformToken(),
      body: { name: 'audited', kind: 'openai-compatible', baseUrl: 'https://api.example.com/v1', model: 'm' },
    });
    expect(created.status, created.text).toBe(201);
    await call('DELETE', `/api/admin/ai-providers/${created.body.id}`, { token: platformToken() });

    const page = await call<Page>('GET', `/api/admin/audit-events?targetId=${created.body.id}`, {
      token: platformToken(),
    });

    expect(page.status, page.text).toBe(200);
    expect(page.body.data.map((entry) => entry.type)).toEqual(['ai_provider.deleted', 'ai_provider.created']);
  });
});
