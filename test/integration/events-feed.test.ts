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
type Page = { data: Event[]; nextCursor: string | null };

let tenant: Tenant;

beforeAll(async () => {
  tenant = await createTenant();
});

/** Events are served once they are a second old: poll like a client catching up would. */
async function readAll(token: string, query = ''): Promise<Event[]> {
  const events: Event[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 40; i++) {
    const separator = query ? '&' : '';
    const page: { body: Page } = await call<Page>(
      'GET',
      `/api/events?${query}${cursor ? `${separator}cursor=${encodeURIComponent(cursor)}` : ''}`,
      { token },
    );
    events.push(...page.body.data);
    cursor = page.body.nextCursor;
    if (page.body.data.length === 0) return events;
  }
  return events;
}

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
    const events = await eventsAtLeast(tenant.apiKey, 'limit=2', 3);
    expect(events.map((event) => event.type)).toEqual([
      'conversation.created',
      'message.created',
      'conversation.updated',
    ]);
    expect(events.every((event) => event.organizationId === tenant.orgId)).toBe(true);
    expect(events[2]?.data).toMatchObject({ id: conversation.body.id, version: 2, priority: 'high' });
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
