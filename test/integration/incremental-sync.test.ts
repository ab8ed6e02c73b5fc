import { describe, expect, it } from 'vitest';
import { call, createTenant, createVisitor } from '../helpers/api';
import { eventually } from '../helpers/eventually';
import { eventuallyIndexed } from '../helpers/indexed';

/** `GET /api/conversations?updatedSince=`: changes oldest first, deletions included, an exact cursor. */
interface Conversation {
  id: string;
  status: string;
  title: string;
  updatedAt: string;
  deletedAt?: string | null;
}
interface SyncPage {
  data: Conversation[];
  nextCursor: string | null;
  done?: boolean;
}

describe('GET /api/conversations?updatedSince=', () => {
  it('serves changes oldest first, deleted ones with deletedAt, and resumes exactly from its cursor', {
    timeout: 60_000,
  }, async () => {
    const tenant = await createTenant();
    const visitor = await createVisitor(tenant.widgetKey);
    const since = new Date().toISOString();
    const open = async (title: string) => {
      const created = await call<Conversation>('POST', '/api/conversations', {
        token: tenant.apiKey,
        body: { visitorId: visitor.visitor.id, title },
      });
      expect(created.status, created.text).toBe(201);
      return created.body.id;
    };
    const first = await open('first');
    const second = await open('second');
    const third = await open('third');
    await call('PATCH', `/api/conversations/${first}`, { token: tenant.apiKey, body: { status: 'closed' } });
    const deleted = await call('POST', '/api/conversations/bulk-delete', {
      token: tenant.apiKey,
      body: { conversationIds: [second] },
    });
    expect(deleted.status, deleted.text).toBe(200);
    const sync = (query: string) =>
      call<SyncPage>('GET', `/api/conversations?updatedSince=${since}${query}`, { token: tenant.apiKey });

    const all = await eventually(
      async () => (await sync('&limit=100')).body,
      (page) => page.data.length === 3,
    );

    // The deletion and the close are the latest changes: oldest first, each conversation once.
    expect(all.data.map((conversation) => conversation.id)).toEqual([third, first, second]);
    expect(all.data[2]?.deletedAt).toEqual(expect.any(String));
    expect(all.data[0]?.deletedAt).toBeNull();
    expect(all.done).toBe(true);
    expect(all.nextCursor).toEqual(expect.any(String));
    const closedOnly = await sync('&status=closed');
    expect(closedOnly.body.data.map((conversation) => conversation.id)).toEqual([first]);

    const one = await sync('&limit=1');
    expect(one.body.data.map((conversation) => conversation.id)).toEqual([third]);
    expect(one.body.done).toBe(false);
    const rest = await sync(`&limit=100&cursor=${encodeURIComponent(one.body.nextCursor ?? '')}`);
    expect(rest.body.data.map((conversation) => conversation.id)).toEqual([first, second]);

    // A message moves the conversation past the cursor: served again, and nothing else.
    const posted = await call('POST', `/api/conversations/${third}/messages`, {
      token: tenant.adminSession,
      body: { content: 'later' },
    });
    expect(posted.status, posted.text).toBe(201);
    const later = await eventually(
      async () => (await sync(`&cursor=${encodeURIComponent(all.nextCursor ?? '')}`)).body,
      (page) => page.data.length > 0,
    );
    expect(later.data.map((conversation) => conversation.id)).toEqual([third]);
  });

  it('answers ordinary listings with deletedAt null', async () => {
    const tenant = await createTenant();
    const visitor = await createVisitor(tenant.widgetKey);
    const created = await call('POST', '/api/conversations', {
      token: visitor.token,
      body: { message: 'hi' },
    });
    expect(created.status, created.text).toBe(201);
    // A listing reads an index: it may show the new conversation up to 2 s later.
    const listed = await eventuallyIndexed(
      () => call<SyncPage>('GET', '/api/conversations', { token: tenant.apiKey }),
      (answer) => answer.body.data.length > 0,
    );
    expect(listed.body.data[0]?.deletedAt).toBeNull();
    expect(listed.body).not.toHaveProperty('done');
  });
});
