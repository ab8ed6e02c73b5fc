import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Usage } from '../../shared/usage/usage';
import {
  type ApiResponse,
  type CallOptions,
  call,
  createApiKey,
  createTenant,
  createVisitor,
  platformToken,
  type Tenant,
} from '../helpers/api';
import { eventually } from '../helpers/eventually';
import { png, readyUpload } from '../helpers/uploads';

/**
 * Usage per organization (contract "Usage per organization"): what a tenant did, counted from
 * outside here request by request, equals what `GET /api/usage` and the platform admin's views show.
 */
interface Report {
  organizationId: string;
  from: string;
  to: string;
  granularity: 'day' | 'month';
  data: ({ period: string } & Usage)[];
  totals: Usage;
}

const today = () => new Date().toISOString().slice(0, 10);
const addDays = (day: string, n: number) =>
  new Date(Date.parse(day) + n * 86_400_000).toISOString().slice(0, 10);

/** A tenant whose every request is counted here, with its answer's status. */
function counted(tenant: Tenant) {
  const sent = { total: 0, clientErrors: 0, rateLimited: 0, serverErrors: 0 };
  return {
    sent,
    async call<T = Record<string, unknown>>(
      method: string,
      path: string,
      options: CallOptions,
    ): Promise<ApiResponse<T>> {
      const response = await call<T>(method, path, options);
      sent.total++;
      if (response.status === 429) sent.rateLimited++;
      else if (response.status >= 500) sent.serverErrors++;
      else if (response.status >= 400) sent.clientErrors++;
      return response;
    },
    tenant,
  };
}

const adminUsage = (orgId: string, query = '') =>
  call<Report>('GET', `/api/admin/organizations/${orgId}/usage${query}`, { token: platformToken() });

let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  [tenant, other] = await Promise.all([createTenant(), createTenant()]);
});

describe('usage per organization', () => {
  it('equals what the organization did today, counted from outside, and leaves other organizations out', async () => {
    const client = counted(tenant);
    const visitor = await createVisitor(tenant.widgetKey);
    client.sent.total++; // the widget key's request is the organization's too
    const key = { token: tenant.apiKey };
    const conversations: string[] = [];
    for (const message of ['Where is my parcel?', 'And my refund?']) {
      const created = await client.call<{ id: string }>('POST', '/api/conversations', {
        ...key,
        body: { visitorId: visitor.visitor.id, message },
      });
      expect(created.status, created.text).toBe(201);
      conversations.push(created.body.id);
    }
    const [first = ''] = conversations;
    const posts = [
      { token: visitor.token, body: { content: 'Any news?' } },
      { token: tenant.apiKey, body: { content: 'On its way', operatorId: tenant.operatorId } },
      { token: tenant.operatorSession, body: { content: 'Tracking number follows' } },
    ];
    for (const post of posts) {
      const posted = await client.call('POST', `/api/conversations/${first}/messages`, post);
      expect(posted.status, posted.text).toBe(201);
    }
    const note = await client.call('POST', `/api/conversations/${first}/notes`, {
      token: tenant.operatorSession,
      body: { content: 'Carrier called' },
    });
    expect(note.status, note.text).toBe(201);
    expect((await client.call('GET', `/api/conversations/${randomUUID()}`, key)).status).toBe(404);
    expect((await client.call('GET', '/api/conversations?limit=0', key)).status).toBe(422);
    // An upload made ready (create, PUT to storage, complete): two requests of the organization.
    const upload = await readyUpload(tenant.apiKey, png(2048));
    expect(upload.status).toBe('ready');
    client.sent.total += 2;
    const searched = await client.call('GET', '/api/conversations/search?q=parcel', key);
    expect(searched.status, searched.text).toBe(200);

    // Every event the feed shows for the organization, read to its end (these reads count too).
    const feed = await eventually(
      async () => {
        const events: unknown[] = [];
        let cursor: string | null = null;
        let done = false;
        while (!done) {
          const page: ApiResponse<{ data: unknown[]; nextCursor: string | null; done: boolean }> =
            await client.call(
              'GET',
              `/api/events?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
              key,
            );
          expect(page.status, page.text).toBe(200);
          events.push(...page.body.data);
          cursor = page.body.nextCursor;
          done = page.body.done;
        }
        return events.length;
      },
      // 2 created, 5 messages, 1 note, the visitor: at least.
      (count) => count >= 9,
      { timeoutMs: 15_000, intervalMs: 250 },
    );

    // After the feed shows them, the listing the export reads (an index) does too: a row a conversation.
    const exported = await client.call('GET', '/api/export/conversations?format=csv', key);
    expect(exported.status, exported.text).toBe(200);
    const rows = (parse(exported.text) as string[][]).length - 1;
    expect(rows).toBe(2);

    const expected = {
      conversationsCreated: 2,
      messages: 5,
      visitorMessages: 3,
      notes: 1,
      events: feed,
      exports: { count: 1, rows },
      uploads: { count: 1, bytes: 2048 },
      storedBytes: 2048,
      searchQueries: 1,
      apiRequests: client.sent,
    };
    const read = await eventually(
      () => adminUsage(tenant.orgId),
      (answer) =>
        answer.status === 200 && expect.objectContaining(expected).asymmetricMatch(answer.body.totals),
      { timeoutMs: 45_000, intervalMs: 500 },
    );
    expect(read.status, read.text).toBe(200);
    expect(read.body.totals).toMatchObject(expected);
    expect(read.body.totals.capacityUnits.read).toBeGreaterThan(0);
    expect(read.body.totals.capacityUnits.write).toBeGreaterThan(0);
    // The default window: the 30 days that end today, each listed, today's with everything.
    expect(read.body).toMatchObject({
      organizationId: tenant.orgId,
      from: addDays(today(), -29),
      to: addDays(today(), 1),
      granularity: 'day',
    });
    expect(read.body.data).toHaveLength(30);
    expect(read.body.data.at(-1)).toMatchObject({ period: today(), ...expected });
    expect(read.body.data[0]).toMatchObject({ messages: 0, apiRequests: { total: 0 } });

    // The other organization did none of it.
    const quiet = await adminUsage(other.orgId);
    expect(quiet.body.totals).toMatchObject({ conversationsCreated: 0, messages: 0, notes: 0 });

    // The organization's admin reads the same figures (one request more, counted after it).
    const own = await call<Report>('GET', '/api/usage', { token: tenant.adminSession });
    expect(own.status, own.text).toBe(200);
    expect(own.body.totals).toMatchObject({ conversationsCreated: 2, messages: 5, notes: 1 });

    // By month: one entry per UTC month the window touches, the same totals.
    const monthly = await adminUsage(
      tenant.orgId,
      `?from=${addDays(today(), -40)}&to=${addDays(today(), 1)}&granularity=month`,
    );
    expect(monthly.status, monthly.text).toBe(200);
    expect(monthly.body.data.map((entry) => entry.period)).toEqual(
      [...new Set([addDays(today(), -40).slice(0, 7), today().slice(0, 7)])].sort(),
    );
    expect(monthly.body.data.at(-1)).toMatchObject({ conversationsCreated: 2, messages: 5 });

    // Ranked by messages: the busier organization first.
    const ranked = await call<{
      metric: string;
      data: { organizationId: string; name: string; value: number }[];
    }>('GET', '/api/admin/usage/top?metric=messages&limit=100', { token: platformToken() });
    expect(ranked.status, ranked.text).toBe(200);
    const mine = ranked.body.data.find((entry) => entry.organizationId === tenant.orgId);
    expect(mine).toEqual({ organizationId: tenant.orgId, name: 'Test org', value: 5 });
    expect(ranked.body.data.some((entry) => entry.organizationId === other.orgId)).toBe(false);
    const values = ranked.body.data.map((entry) => entry.value);
    expect(values).toEqual([...values].sort((a, b) => b - a));
  }, 90_000);

  it('is for administrators: usage:read keys and admin sessions, not operators or other scopes', async () => {
    const scoped = await createApiKey(tenant.orgId, ['usage:read']);
    const narrow = await createApiKey(tenant.orgId, ['conversations:read']);
    expect((await call('GET', '/api/usage', { token: scoped.key })).status).toBe(200);
    expect((await call('GET', '/api/usage', { token: tenant.adminSession })).status).toBe(200);
    expect((await call('GET', '/api/usage', { token: narrow.key })).status).toBe(403);
    expect((await call('GET', '/api/usage', { token: tenant.operatorSession })).status).toBe(403);
    expect(
      (await call('GET', `/api/admin/organizations/${tenant.orgId}/usage`, { token: tenant.apiKey })).status,
    ).toBe(403);
    expect(
      (await call('GET', `/api/admin/organizations/${randomUUID()}/usage`, { token: platformToken() }))
        .status,
    ).toBe(404);
  });

  it('refuses a window it cannot answer with the parameter named (422)', async () => {
    const refused = async (query: string, field: string) => {
      const answer = await call<{ error: { code: string; details?: { field?: string } } }>(
        'GET',
        `/api/usage${query}`,
        {
          token: tenant.apiKey,
        },
      );
      expect(answer.status, `${query}: ${answer.text}`).toBe(422);
      expect(answer.text).toContain(field);
    };
    await refused('?from=2026-11-10&to=2026-11-10', 'from');
    await refused('?from=2025-01-01&to=2026-11-10', 'from');
    await refused('?from=2026-13-01', 'from');
    await refused('?granularity=week', 'granularity');
    const tooMany = await call('GET', '/api/admin/usage/top?metric=messages&limit=101', {
      token: platformToken(),
    });
    expect(tooMany.status).toBe(422);
    expect(tooMany.text).toContain('limit');
    const one = await call<{ data: unknown[] }>('GET', '/api/admin/usage/top?metric=apiRequests&limit=1', {
      token: platformToken(),
    });
    expect(one.status, one.text).toBe(200);
    expect(one.body.data.length).toBeLessThanOrEqual(1);
    const top = await call('GET', '/api/admin/usage/top?metric=bananas', { token: platformToken() });
    expect(top.status).toBe(422);
    expect(top.text).toContain('metric');
  });
});
