import { beforeAll, describe, expect, it } from 'vitest';
import { call, createApiKey, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { eventually } from '../helpers/eventually';

type Event = {
  id: string;
  type: string;
  organizationId: string;
  timestamp: string;
  data: { id?: string; version?: number };
};
type Page = { data: Event[]; nextCursor: string | null; done: boolean };

let tenant: Tenant;

beforeAll(async () => {
  tenant = await createTenant();
});

/** Reads the feed as a client catching up would: follows `nextCursor` until the page says `done`. */
async function readUntilDone(
  token: string,
  query = '',
  from: string | null = null,
): Promise<{ events: Event[]; cursor: string | null; pages: number }> {
  const events: Event[] = [];
  let cursor = from;
  for (let pages = 1; pages <= 100; pages++) {
    const separator = query ? '&' : '';
    const page: { status: number; body: Page } = await call<Page>(
      'GET',
      `/api/events?${query}${cursor ? `${separator}cursor=${encodeURIComponent(cursor)}` : ''}`,
      { token },
    );
    expect(page.status).toBe(200);
    events.push(...page.body.data);
    cursor = page.body.nextCursor;
    if (page.body.done) return { events, cursor, pages };
  }
  throw new Error('the feed never said done');
}

const readAll = async (token: string, query = ''): Promise<Event[]> =>
  (await readUntilDone(token, query)).events;

const eventsAtLeast = (token: string, query: string, count: number): Promise<Event[]> =>
  eventually(
    () => readAll(token, query),
    (events) => events.length >= count,
    { timeoutMs: 10_000, intervalMs: 250 },
  );

describe('GET /api/events', () => {
  it('lists every change of the organization oldest first, in the webhook envelope, with conversation versions', async () => {
    const visitor = await createVisitor(tenant.widgetKey);
    const conversation = await call<{ id: string }>('POST', '/api/conversations', {
      token: visitor.token,
      body: { message: 'Hi' },
    });
    await call('PATCH', `/api/conversations/${conversation.body.id}`, {
      token: tenant.apiKey,
      body: { priority: 'high' },
    });
    const events = await eventsAtLeast(tenant.apiKey, 'limit=2', 4);
    expect(events.map((event) => event.type)).toEqual([
      'visitor.created',
      'conversation.created',
      'message.created',
      'conversation.updated',
    ]);
    expect(events.every((event) => event.organizationId === tenant.orgId)).toBe(true);
    expect(events[0]?.data).toMatchObject({ id: visitor.visitor.id });
    expect(events[3]?.data).toMatchObject({ id: conversation.body.id, version: 2, priority: 'high' });
    const ids = events.map((event) => event.id);
    expect(ids).toEqual([...ids].sort());
  });

  it('filters by type, refuses unknown types, and needs webhooks:read', async () => {
    const updates = await eventsAtLeast(tenant.apiKey, 'types=conversation.updated,note.created', 1);
    expect(updates.length).toBeGreaterThan(0);
    expect(new Set(updates.map((event) => event.type))).toEqual(new Set(['conversation.updated']));
    expect(
      (await call('GET', '/api/events?types=conversation.exploded', { token: tenant.apiKey })).status,
    ).toBe(422);
    const tooMany = await call<{ error: { details: { field: string } } }>('GET', '/api/events?limit=101', {
      token: tenant.apiKey,
    });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.error.details.field).toBe('limit');
    const narrow = await createApiKey(tenant.orgId, ['conversations:read']);
    expect((await call('GET', '/api/events', { token: narrow.key })).status).toBe(403);
    const reader = await createApiKey(tenant.orgId, ['webhooks:read']);
    expect((await call('GET', '/api/events', { token: reader.key })).status).toBe(200);
  });

  it('says when a client has caught up, and serves newer events from the same cursor later', async () => {
    const reader = await createTenant();
    const empty = await call<Page>('GET', '/api/events', { token: reader.apiKey });
    expect(empty.body).toEqual({ data: [], nextCursor: null, done: true });

    const visitor = await createVisitor(reader.widgetKey);
    for (const message of ['one', 'two', 'three']) {
      await call('POST', '/api/conversations', { token: visitor.token, body: { message } });
    }
    // Seven events (the visitor, three conversations, three first messages), two a page until done.
    const first = await eventually(
      () => readUntilDone(reader.apiKey, 'limit=2'),
      (read) => read.events.length >= 7,
      { timeoutMs: 10_000, intervalMs: 250 },
    );
    expect(first.events).toHaveLength(7);
    expect(first.pages).toBeGreaterThanOrEqual(3);
    expect(first.cursor).toEqual(expect.any(String));

    const caughtUp = await call<Page>(
      'GET',
      `/api/events?limit=2&cursor=${encodeURIComponent(first.cursor ?? '')}`,
      { token: reader.apiKey },
    );
    expect(caughtUp.body).toMatchObject({ data: [], done: true, nextCursor: expect.any(String) });

    const later = await call<{ id: string }>('POST', '/api/conversations', {
      token: visitor.token,
      body: { message: 'four' },
    });
    const polled = await eventually(
      () => readUntilDone(reader.apiKey, 'limit=2', first.cursor),
      (read) => read.events.length >= 2,
      { timeoutMs: 10_000, intervalMs: 250 },
    );
    expect(polled.events.map((event) => [event.type, event.data.id ?? event.data])).toEqual([
      ['conversation.created', later.body.id],
      ['message.created', expect.anything()],
    ]);
    expect(new Set(polled.events.map((event) => event.id)).size).toBe(2);
    expect(first.events.map((event) => event.id)).not.toContain(polled.events[0]?.id);
  });

  it('serializes event data exactly as the REST answer of the same version, field order included', async () => {
    const own = await createTenant();
    const visitor = await createVisitor(own.widgetKey, { metadata: { plan: 'pro', seats: 3 } });
    const created = await call<{ id: string }>('POST', '/api/conversations', {
      token: visitor.token,
      body: { message: 'Where is my order?', metadata: { orderId: 'A-1', channel: 'web' } },
    });
    const patched = await call('PATCH', `/api/conversations/${created.body.id}`, {
      token: own.apiKey,
      body: { priority: 'high', tags: ['orders'], metadata: { step: 2 } },
    });
    const rest = await call('GET', `/api/conversations/${created.body.id}`, { token: own.apiKey });
    const messages = await call<{ data: unknown[] }>(
      'GET',
      `/api/conversations/${created.body.id}/messages`,
      {
        token: own.apiKey,
      },
    );
    // visitor.created, conversation.created, message.created, conversation.updated.
    const events = await eventsAtLeast(own.apiKey, '', 4);
    const updated = events.find((event) => event.type === 'conversation.updated');
    const message = events.find((event) => event.type === 'message.created');
    expect(JSON.stringify(updated?.data)).toBe(patched.text);
    expect(JSON.stringify(updated?.data)).toBe(rest.text);
    expect(JSON.stringify(message?.data)).toBe(JSON.stringify(messages.body.data[0]));
  });

  it('keeps organizations apart and refuses another organization’s cursor', async () => {
    const other = await createTenant();
    expect(await readAll(other.apiKey)).toEqual([]);
    const page = await call<Page>('GET', '/api/events?limit=1', { token: tenant.apiKey });
    expect(page.body.nextCursor).toBeTruthy();
    const foreign = await call(
      'GET',
      `/api/events?cursor=${encodeURIComponent(page.body.nextCursor ?? '')}`,
      { token: other.apiKey },
    );
    expect(foreign.status).toBe(400);
  });
});
