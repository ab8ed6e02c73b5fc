import { beforeAll, describe, expect, it } from 'vitest';
import { LISTING_SHARDS, shardOf } from '../../shared/db/shards';
import { call, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { eventually } from '../helpers/eventually';
import { eventuallyIndexed } from '../helpers/indexed';

/**
 * The listings that move with every message are spread over shards by conversation id and merged
 * when read: a user paging them sees one list, newest first, each conversation once.
 */
type Listed = { id: string; status: string; priority: string; lastMessageAt: string; updatedAt: string };
type Page = { data: Listed[]; nextCursor: string | null; done?: boolean };

const COUNT = 20;
let tenant: Tenant;
let since: string;
const created: Listed[] = [];
const assigned: string[] = [];

/** Every conversation of a listing, following cursors `limit` at a time. */
async function readAll(query: string, limit: number): Promise<Listed[]> {
  const seen: Listed[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const response: { status: number; body: Page; text: string } = await call<Page>(
      'GET',
      `/api/conversations?${query}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { token: tenant.apiKey },
    );
    expect(response.status, response.text).toBe(200);
    expect(response.body.data.length).toBeLessThanOrEqual(limit);
    seen.push(...response.body.data);
    cursor = response.body.nextCursor;
    if (!cursor) return seen;
  }
  throw new Error('the listing never ended');
}

/** Every page of an incremental sync from `since`, `limit` at a time, until it says it is done. */
async function syncAll(limit: number): Promise<Listed[]> {
  const seen: Listed[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const response: { status: number; body: Page; text: string } = await call<Page>(
      'GET',
      `/api/conversations?updatedSince=${since}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { token: tenant.apiKey },
    );
    expect(response.status, response.text).toBe(200);
    expect(response.body.data.length).toBeLessThanOrEqual(limit);
    seen.push(...response.body.data);
    if (response.body.done) return seen;
    cursor = response.body.nextCursor;
  }
  throw new Error('the sync never ended');
}

/** Newest first, as the listing sorts (`<lastMessageAt>#<id>`, descending). */
const newestFirst = (list: readonly Listed[]) =>
  [...list].sort((a, b) => {
    const [x, y] = [`${a.lastMessageAt}#${a.id}`, `${b.lastMessageAt}#${b.id}`];
    return x < y ? 1 : x > y ? -1 : 0;
  });

/** Oldest change first, as the sync serves (`<updatedAt>#<id>`, ascending). */
const oldestChangeFirst = (list: readonly Listed[]) =>
  [...list].sort((a, b) => {
    const [x, y] = [`${a.updatedAt}#${a.id}`, `${b.updatedAt}#${b.id}`];
    return x < y ? -1 : x > y ? 1 : 0;
  });

const ids = (list: readonly Listed[]) => list.map((conversation) => conversation.id);

beforeAll(async () => {
  tenant = await createTenant();
  const visitor = (await createVisitor(tenant.widgetKey)).visitor.id;
  since = new Date().toISOString();
  for (let i = 0; i < COUNT; i++) {
    const response = await call<Listed>('POST', '/api/conversations', {
      token: tenant.apiKey,
      body: { visitorId: visitor, message: `hello ${i}`, priority: i % 3 ? 'low' : 'high' },
    });
    expect(response.status, response.text).toBe(201);
    created.push(response.body);
  }
  // Some assigned (the operator listing is sharded too), some in other statuses, and messages
  // that move older conversations to the top of every listing.
  for (const [i, conversation] of created.entries()) {
    if (i % 4 === 0) {
      const patched = await call('PATCH', `/api/conversations/${conversation.id}`, {
        token: tenant.apiKey,
        body: { operatorId: tenant.operatorId },
      });
      expect(patched.status, patched.text).toBe(200);
      assigned.push(conversation.id);
    }
    if (i % 5 === 1) {
      const patched = await call('PATCH', `/api/conversations/${conversation.id}`, {
        token: tenant.apiKey,
        body: { status: i % 2 ? 'pending' : 'closed' },
      });
      expect(patched.status, patched.text).toBe(200);
    }
  }
  for (const conversation of [created[2], created[7], created[11]]) {
    const posted = await call('POST', `/api/conversations/${conversation?.id}/messages`, {
      token: tenant.adminSession,
      body: { content: 'later' },
    });
    expect(posted.status, posted.text).toBe(201);
  }
});

describe('listings spread over shards', () => {
  it('spreads the conversations over several shards', () => {
    const shards = new Set(created.map((conversation) => shardOf(conversation.id, LISTING_SHARDS)));
    expect(shards.size).toBeGreaterThan(1);
  });

  it('pages GET /api/conversations newest first, each conversation exactly once, with and without a filter', {
    timeout: 30_000,
  }, async () => {
    const everything = await eventuallyIndexed(
      () => readAll('', 100),
      (listed) => listed.length === COUNT && listed[0]?.id === created[11]?.id,
    );
    expect(ids(everything).sort()).toEqual(ids(created).sort());
    expect(ids(everything)).toEqual(ids(newestFirst(everything)));
    expect(ids(everything).slice(0, 3)).toEqual([created[11]?.id, created[7]?.id, created[2]?.id]);

    for (const limit of [1, 3, 7]) expect(ids(await readAll('', limit))).toEqual(ids(everything));

    const high = everything.filter((conversation) => conversation.priority === 'high');
    expect(high.length).toBeGreaterThan(1);
    expect(ids(await readAll('priority=high', 2))).toEqual(ids(high));
    const open = everything.filter((conversation) => conversation.status === 'open');
    expect(ids(await readAll('status=open', 3))).toEqual(ids(open));
    const mine = everything.filter((conversation) => assigned.includes(conversation.id));
    expect(ids(await readAll(`operatorId=${tenant.operatorId}`, 2))).toEqual(ids(mine));
  });

  it('serves every changed conversation once, oldest change first, across sync pages', {
    timeout: 30_000,
  }, async () => {
    // A sync serves a change once it has settled (a few seconds): wait until all of them show.
    const whole = await eventually(
      () => syncAll(100),
      (synced) => synced.length === COUNT,
      { timeoutMs: 20_000, intervalMs: 500 },
    );
    expect(ids(whole).sort()).toEqual(ids(created).sort());
    expect(ids(whole)).toEqual(ids(oldestChangeFirst(whole)));
    for (const limit of [1, 3]) expect(ids(await syncAll(limit))).toEqual(ids(whole));
  });
});
