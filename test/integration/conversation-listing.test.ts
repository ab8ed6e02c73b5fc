import { beforeAll, describe, expect, it } from 'vitest';
import { INDEX_LAG_MS } from '../../shared/db/index-lag';
import { call, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { eventually } from '../helpers/eventually';

type Listed = { id: string; status: string; lastMessageAt: string; priority: string };
type Page = { data: Listed[]; nextCursor: string | null };

/** Every conversation of a listing, following cursors `limit` at a time. */
async function readAll(token: string, query: string, limit: number): Promise<Listed[]> {
  const seen: Listed[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const separator = query ? '&' : '';
    const response: { status: number; body: Page } = await call<Page>(
      'GET',
      `/api/conversations?${query}${separator}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { token },
    );
    expect(response.status).toBe(200);
    expect(response.body.data.length).toBeLessThanOrEqual(limit);
    seen.push(...response.body.data);
    cursor = response.body.nextCursor;
    if (!cursor) return seen;
  }
  throw new Error('the listing never ended');
}

const newestFirst = (list: Listed[]) =>
  [...list].sort((a, b) =>
    a.lastMessageAt === b.lastMessageAt ? 0 : a.lastMessageAt < b.lastMessageAt ? 1 : -1,
  );

let tenant: Tenant;
let visitorId: string;
let visitorToken: string;
const ids: string[] = [];

beforeAll(async () => {
  tenant = await createTenant();
  const visitor = await createVisitor(tenant.widgetKey);
  visitorId = visitor.visitor.id;
  visitorToken = visitor.token;
  const other = (await createVisitor(tenant.widgetKey)).visitor.id;
  // Seven conversations over two visitors, in every status, some assigned.
  for (let i = 0; i < 7; i++) {
    const created = await call<{ id: string }>('POST', '/api/conversations', {
      token: tenant.apiKey,
      body: { visitorId: i < 5 ? visitorId : other, message: `hello ${i}`, priority: i % 2 ? 'high' : 'low' },
    });
    ids.push(created.body.id);
  }
  const patch = (id: string | undefined, body: object) =>
    call('PATCH', `/api/conversations/${id}`, { token: tenant.apiKey, body });
  await patch(ids[1], { status: 'pending' });
  await patch(ids[2], { status: 'closed', operatorId: tenant.operatorId });
  await patch(ids[5], { operatorId: tenant.operatorId });
  await call('POST', `/api/conversations/${ids[3]}/snooze`, {
    token: tenant.apiKey,
    body: { until: new Date(Date.now() + 3_600_000).toISOString() },
  });
  // A new message moves the oldest conversation to the top of every listing it is in.
  await call('POST', `/api/conversations/${ids[0]}/messages`, {
    token: visitorToken,
    body: { content: 'any news?' },
  });
  // A listing may show a write up to 2 s later (an index lags its table): the tests below read
  // what these writes made of the listings once they show them all.
  await new Promise((resolve) => setTimeout(resolve, INDEX_LAG_MS));
});

describe('GET /api/conversations', () => {
  it('merges every status into one listing, newest message first, across pages, without repeats', async () => {
    for (const limit of [1, 2, 3, 100]) {
      const all = await readAll(tenant.apiKey, '', limit);
      expect(all.map((c) => c.id).sort()).toEqual([...ids].sort());
      expect(all.map((c) => c.id)).toEqual(newestFirst(all).map((c) => c.id));
      expect(all[0]?.id).toBe(ids[0]);
      expect(new Set(all.map((c) => c.status))).toEqual(new Set(['open', 'pending', 'closed', 'snoozed']));
    }
  });

  it('lists a visitor’s conversations by their latest message, and follows a new message', async () => {
    const mine = await readAll(tenant.apiKey, `visitorId=${visitorId}`, 2);
    expect(mine.map((c) => c.id).sort()).toEqual(ids.slice(0, 5).sort());
    expect(mine.map((c) => c.id)).toEqual(newestFirst(mine).map((c) => c.id));
    expect(mine[0]?.id).toBe(ids[0]);
    await call('POST', `/api/conversations/${ids[4]}/messages`, {
      token: visitorToken,
      body: { content: 'me again' },
    });
    const after = await eventually(
      () => readAll(visitorToken, '', 2),
      (listed) => listed[0]?.id === ids[4] && listed.length === 5,
      { timeoutMs: INDEX_LAG_MS },
    );
    expect(after[0]?.id).toBe(ids[4]);
    expect(after.map((c) => c.id).sort()).toEqual(ids.slice(0, 5).sort());
    const closedOfVisitor = await readAll(tenant.apiKey, `visitorId=${visitorId}&status=closed`, 1);
    expect(closedOfVisitor.map((c) => c.id)).toEqual([ids[2]]);
  });

  it('filters by status, operator, priority and tag exactly, whatever the page size', async () => {
    expect((await readAll(tenant.apiKey, 'status=pending', 1)).map((c) => c.id)).toEqual([ids[1]]);
    const assigned = await readAll(tenant.apiKey, `operatorId=${tenant.operatorId}`, 1);
    expect(assigned.map((c) => c.id).sort()).toEqual([ids[2], ids[5]].sort());
    const assignedOpen = await readAll(tenant.apiKey, `operatorId=${tenant.operatorId}&status=open`, 1);
    expect(assignedOpen.map((c) => c.id)).toEqual([ids[5]]);
    const high = await readAll(tenant.apiKey, 'priority=high', 1);
    expect(high.map((c) => c.id).sort()).toEqual([ids[1], ids[3], ids[5]].sort());
    expect(high.every((c) => c.priority === 'high')).toBe(true);
    // A visitor's listing checks these filters on the conversations themselves (its index entries
    // hold only the latest message's time): exact too, across pages.
    for (const limit of [1, 100]) {
      const visitorHigh = await readAll(tenant.apiKey, `visitorId=${visitorId}&priority=high`, limit);
      expect(visitorHigh.map((c) => c.id).sort()).toEqual([ids[1], ids[3]].sort());
      const visitorAssigned = await readAll(
        tenant.apiKey,
        `visitorId=${visitorId}&operatorId=${tenant.operatorId}`,
        limit,
      );
      expect(visitorAssigned.map((c) => c.id)).toEqual([ids[2]]);
      expect(await readAll(tenant.apiKey, `visitorId=${visitorId}&tag=nowhere`, limit)).toEqual([]);
    }
  });

  it('lists a conversation whose status just changed once, whatever the page size', async () => {
    const own = await createTenant();
    const visitor = (await createVisitor(own.widgetKey)).visitor.id;
    const started: string[] = [];
    for (let i = 0; i < 4; i++) {
      const created = await call<{ id: string }>('POST', '/api/conversations', {
        token: own.apiKey,
        body: { visitorId: visitor, message: `status ${i}` },
      });
      expect(created.status, created.text).toBe(201);
      started.push(created.body.id);
    }
    await new Promise((resolve) => setTimeout(resolve, INDEX_LAG_MS));
    // Its entry moves from the open partition to the pending one; the listing of every status is
    // read right after, while an index may still hold both entries.
    const changed = started[1] ?? '';
    const patched = await call('PATCH', `/api/conversations/${changed}`, {
      token: own.apiKey,
      body: { status: 'pending' },
    });
    expect(patched.status, patched.text).toBe(200);
    for (const limit of [1, 2, 100]) {
      const listed = (await readAll(own.apiKey, '', limit)).map((conversation) => conversation.id);
      expect(new Set(listed).size).toBe(listed.length);
    }
    const settled = await eventually(
      () => readAll(own.apiKey, '', 2),
      (all) => all.some((conversation) => conversation.id === changed && conversation.status === 'pending'),
      { timeoutMs: INDEX_LAG_MS },
    );
    expect(settled.filter((conversation) => conversation.id === changed)).toMatchObject([
      { status: 'pending' },
    ]);
    expect(settled.map((conversation) => conversation.id).sort()).toEqual([...started].sort());
  });
});
