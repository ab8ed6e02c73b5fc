import { beforeAll, describe, expect, it } from 'vitest';
import { call, createApiKey, createTenant, createVisitor, platformToken, type Tenant } from '../helpers/api';

/** The organization's chatbot configuration, also seen as `chatbot` in the admin's organization record. */
interface Config {
  enabled: boolean;
  schedule: { timezone: string; days: { day: string; from: string; to: string }[] } | null;
  knowledgeThreshold: number;
  rules: { id: string; name: string; intent: string; keywords: string[]; actions: string[] }[];
  intentPolicies: { intent: string; handling: string; tag: string; priority: string }[];
  updatedAt: string;
}
interface ErrorBody {
  error: { code: string; details?: { field?: string; reason?: string } };
}

const full = {
  enabled: true,
  schedule: {
    timezone: 'Europe/Paris',
    days: [
      { day: 'mon', from: '09:00', to: '18:00' },
      { day: 'fri', from: '22:00', to: '02:00' },
    ],
  },
  knowledgeThreshold: 0.5,
  rules: [
    {
      name: 'Refunds',
      intent: 'billing',
      keywords: ['refund', 'remboursement'],
      actions: ['answer_from_knowledge'],
    },
    { name: 'Humans', intent: 'human', keywords: ['agent'], actions: ['handoff'] },
  ],
  intentPolicies: [{ intent: 'billing', handling: 'handoff', tag: 'billing', priority: 'high' }],
};

let tenant: Tenant;

beforeAll(async () => {
  tenant = await createTenant();
});

const getConfig = (token: string) => call<Config>('GET', '/api/chatbot/config', { token });
const putConfig = (token: string, body: unknown) =>
  call<Config & ErrorBody>('PUT', '/api/chatbot/config', { token, body });

describe('GET /api/chatbot/config', () => {
  it('starts with the bot off, always in schedule, threshold 0.35, no rules or policies', async () => {
    const fresh = await createTenant();

    const response = await getConfig(fresh.operatorSession);

    expect(response.status, response.text).toBe(200);
    expect(response.body).toEqual({
      enabled: false,
      schedule: null,
      knowledgeThreshold: 0.35,
      rules: [],
      intentPolicies: [],
      updatedAt: expect.any(String),
    });
  });
});

describe('PUT /api/chatbot/config', () => {
  it('replaces the configuration, gives rules ids, and shows it in the organization record', async () => {
    const saved = await putConfig(tenant.apiKey, full);
    const read = await getConfig(tenant.apiKey);
    const record = await call<{ chatbot: Config }>('GET', `/api/admin/organizations/${tenant.orgId}`, {
      token: platformToken(),
    });

    expect(saved.status, saved.text).toBe(200);
    expect(saved.body).toMatchObject({
      ...full,
      rules: full.rules.map((rule) => expect.objectContaining(rule)),
    });
    expect(saved.body.rules.map((rule) => rule.id)).toEqual([
      expect.stringMatching(/^[0-9a-f-]{36}$/),
      expect.stringMatching(/^[0-9a-f-]{36}$/),
    ]);
    expect(read.body).toEqual(saved.body);
    expect(record.body.chatbot).toEqual(saved.body);
  });

  it('keeps the rule ids it is given, and sets omitted fields to their defaults', async () => {
    const first = await putConfig(tenant.adminSession, full);
    const rules = first.body.rules;

    const second = await putConfig(tenant.adminSession, { rules: [...rules].reverse() });

    expect(second.status).toBe(200);
    expect(second.body.rules).toEqual([...rules].reverse());
    expect(second.body).toMatchObject({
      enabled: false,
      schedule: null,
      knowledgeThreshold: 0.35,
      intentPolicies: [],
    });
    expect(Date.parse(second.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(first.body.updatedAt));
  });

  it('takes back a configuration as read (its updatedAt included), and stamps its own time', async () => {
    const read = await getConfig(tenant.apiKey);

    const saved = await putConfig(tenant.apiKey, { ...read.body, updatedAt: '2001-01-01T00:00:00.000Z' });

    expect(saved.status, saved.text).toBe(200);
    expect({ ...saved.body, updatedAt: '' }).toEqual({ ...read.body, updatedAt: '' });
    expect(saved.body.updatedAt >= read.body.updatedAt).toBe(true);
  });

  it('is changed field by field through the admin organization PATCH', async () => {
    const saved = await putConfig(tenant.apiKey, full);

    const patched = await call<{ chatbot: Config }>('PATCH', `/api/admin/organizations/${tenant.orgId}`, {
      token: platformToken(),
      body: { chatbot: { enabled: false, knowledgeThreshold: 0.9 } },
    });
    const read = await getConfig(tenant.apiKey);

    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(read.body).toMatchObject({
      enabled: false,
      knowledgeThreshold: 0.9,
      schedule: full.schedule,
      rules: saved.body.rules,
      intentPolicies: full.intentPolicies,
    });
    expect(patched.body.chatbot).toEqual(read.body);
  });

  it.each([
    ['an unknown time zone', { schedule: { timezone: 'Mars/Olympus', days: [] } }, 'schedule.timezone'],
    [
      'a day that starts and ends at once',
      { schedule: { timezone: 'UTC', days: [{ day: 'mon', from: '10:00', to: '10:00' }] } },
      'schedule.days',
    ],
    [
      'a time that is not HH:MM',
      { schedule: { timezone: 'UTC', days: [{ day: 'mon', from: '9:00', to: '10:00' }] } },
      'schedule.days.0.from',
    ],
    [
      'a day that is not a week day',
      { schedule: { timezone: 'UTC', days: [{ day: 'monday', from: '09:00', to: '10:00' }] } },
      'schedule.days.0.day',
    ],
    ['a threshold above 1', { knowledgeThreshold: 1.5 }, 'knowledgeThreshold'],
    [
      'two policies for one intent',
      { intentPolicies: [full.intentPolicies[0], full.intentPolicies[0]] },
      'intentPolicies',
    ],
    [
      'an unknown handling',
      { intentPolicies: [{ ...full.intentPolicies[0], handling: 'ignore' }] },
      'intentPolicies.0.handling',
    ],
    ['more than 100 rules', { rules: Array.from({ length: 101 }, () => full.rules[0]) }, 'rules'],
    ['an unknown field', { providerId: null }, 'providerId'],
  ])('is 422 for %s, naming the field', async (_what, body, field) => {
    const before = await getConfig(tenant.apiKey);

    const response = await putConfig(tenant.apiKey, body);

    expect(response.status, response.text).toBe(422);
    expect(response.body.error.details?.field).toBe(field);
    expect((await getConfig(tenant.apiKey)).body).toEqual(before.body);
  });

  it('is 422 when the whole configuration exceeds 64 KiB', async () => {
    const keyword = (i: number, j: number) => `k${i}-${j}-${'x'.repeat(40)}`;
    const rules = Array.from({ length: 100 }, (_, i) => ({
      name: `Rule ${i}`,
      intent: 'general',
      keywords: Array.from({ length: 20 }, (_, j) => keyword(i, j)),
      actions: ['answer_from_knowledge'],
    }));

    const response = await putConfig(tenant.apiKey, { rules });

    expect(response.status).toBe(422);
    expect(response.body.error.details).toMatchObject({ field: 'rules', reason: 'config_too_large' });
  });

  it('needs chatbot:write and an admin session; reads need chatbot:read or any session', async () => {
    const reader = await createApiKey(tenant.orgId, ['chatbot:read']);
    const writer = await createApiKey(tenant.orgId, ['chatbot:write']);
    const visitor = await createVisitor(tenant.widgetKey);

    expect((await getConfig(reader.key)).status).toBe(200);
    expect((await getConfig(writer.key)).status).toBe(403);
    expect((await getConfig(tenant.operatorSession)).status).toBe(200);
    expect((await getConfig(visitor.token)).status).toBe(403);
    expect((await putConfig(reader.key, { enabled: true })).status).toBe(403);
    expect((await putConfig(tenant.operatorSession, { enabled: true })).status).toBe(403);
    expect((await putConfig(writer.key, { enabled: true })).status).toBe(200);
    expect((await getConfig(platformToken())).status).toBe(403);
  });

  it("never touches another organization's configuration", async () => {
    const other = await createTenant();

    await putConfig(tenant.apiKey, full);

    expect((await getConfig(other.apiKey)).body).toMatchObject({ enabled: false, rules: [] });
  });
});
