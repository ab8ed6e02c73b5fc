import { beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { eventually } from '../helpers/eventually';
import { eventuallyIndexed, sameIds } from '../helpers/indexed';

/** Visitors as contacts: listing, get, PATCH with If-Match, upsert by external id, incremental sync. */
interface Profile {
  id: string;
  identifier: string;
  externalId: string | null;
  name: string | null;
  email: string | null;
  phone: string | null;
  metadata: Record<string, unknown>;
  conversationCount: number;
  updatedAt: string;
  version: number;
  mergedInto: string | null;
  erasedAt: string | null;
}
interface Page {
  data: Profile[];
  nextCursor: string | null;
  done?: boolean;
}

let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  [tenant, other] = await Promise.all([createTenant(), createTenant()]);
});

const upsert = (externalId: string, body: Record<string, unknown>, token = tenant.apiKey) =>
  call<Profile>('PUT', `/api/visitors/by-external-id/${encodeURIComponent(externalId)}`, { token, body });

describe('PUT /api/visitors/by-external-id/{externalId}', () => {
  it('creates (201) then updates (200) the visitor, merging metadata', async () => {
    const externalId = `crm-${crypto.randomUUID()}`;
    const created = await upsert(externalId, {
      name: 'Ada',
      email: 'ada@example.com',
      metadata: { plan: 'pro' },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ externalId, name: 'Ada', version: 1, conversationCount: 0 });
    expect(created.headers.get('etag')).toBe('"1"');

    const updated = await upsert(externalId, { phone: '+14155550123', metadata: { seats: 3 } });

    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({
      id: created.body.id,
      name: 'Ada',
      phone: '+14155550123',
      metadata: { plan: 'pro', seats: 3 },
      version: 2,
    });
  });

  it('creates exactly one visitor under 20 concurrent upserts of one external id', async () => {
    const externalId = `race-${crypto.randomUUID()}`;
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => upsert(externalId, { name: 'Racer', email: 'racer@example.com' })),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(1);
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(19);
    expect(new Set(answers.map((answer) => answer.body.id)).size).toBe(1);
    const listed = await call<Page>('GET', `/api/visitors?externalId=${externalId}`, {
      token: tenant.apiKey,
    });
    expect(listed.body.data).toHaveLength(1);
    // By e-mail reads an index: it may show the new visitor up to 2 s later.
    const byEmail = await eventuallyIndexed(
      () => call<Page>('GET', '/api/visitors?email=RACER@example.com', { token: tenant.apiKey }),
      (answer) => answer.body.data.length > 0,
    );
    expect(byEmail.body.data.map((visitor) => visitor.id)).toEqual([answers[0]?.body.id]);
  });

  it('refuses a phone that is not E.164 and an invalid e-mail (422)', async () => {
    expect((await upsert('bad-phone', { phone: '0207 123' })).status).toBe(422);
    expect((await upsert('bad-mail', { email: 'not-an-address' })).status).toBe(422);
  });
});

describe('GET and PATCH /api/visitors/{id}', () => {
  it('reads a widget visitor as a contact, counts its conversations, and patches with If-Match', async () => {
    const visitor = await createVisitor(tenant.widgetKey, { identifier: 'grace@example.com' });
    const conversation = await call('POST', '/api/conversations', {
      token: visitor.token,
      body: { message: 'hi' },
    });
    expect(conversation.status).toBe(201);

    // `conversationCount` is counted through the conversations' visitor index (docs/data-model.md):
    // a count read through an index, which may show the new conversation up to 2 s later.
    const got = await eventuallyIndexed(
      () => call<Profile>('GET', `/api/visitors/${visitor.visitor.id}`, { token: tenant.apiKey }),
      (answer) => answer.status !== 200 || answer.body.conversationCount === 1,
    );
    expect(got.status, got.text).toBe(200);
    expect(got.body).toMatchObject({
      identifier: 'grace@example.com',
      conversationCount: 1,
      externalId: null,
    });
    // The listing counts the same, each visitor of the page on its own.
    const listed = await eventuallyIndexed(
      () =>
        call<{ data: Profile[] }>('GET', '/api/visitors?identifier=grace%40example.com', {
          token: tenant.apiKey,
        }),
      (answer) => answer.body.data.find((found) => found.id === visitor.visitor.id)?.conversationCount === 1,
    );
    expect(listed.body.data.find((found) => found.id === visitor.visitor.id)?.conversationCount).toBe(1);
    const etag = got.headers.get('etag') ?? '';

    const patched = await call<Profile>('PATCH', `/api/visitors/${visitor.visitor.id}`, {
      token: tenant.adminSession,
      headers: { 'If-Match': etag },
      body: { name: 'Grace', externalId: `crm-${visitor.visitor.id}` },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.version).toBe(got.body.version + 1);
    const stale = await call<{ error: { details: { currentVersion: number } } }>(
      'PATCH',
      `/api/visitors/${visitor.visitor.id}`,
      { token: tenant.apiKey, headers: { 'If-Match': etag }, body: { name: 'Stale' } },
    );
    expect(stale.status).toBe(412);
    expect(stale.body.error.details.currentVersion).toBe(patched.body.version);
  });

  it('answers 409 for an external id another visitor has, and frees an external id that moves', async () => {
    const first = await upsert(`taken-${crypto.randomUUID()}`, { name: 'First' });
    const second = await createVisitor(tenant.widgetKey);
    const taken = await call('PATCH', `/api/visitors/${second.visitor.id}`, {
      token: tenant.apiKey,
      body: { externalId: first.body.externalId },
    });
    expect(taken.status).toBe(409);
    const moved = await call<Profile>('PATCH', `/api/visitors/${first.body.id}`, {
      token: tenant.apiKey,
      body: { externalId: null },
    });
    expect(moved.body.externalId).toBeNull();
    const now = await call('PATCH', `/api/visitors/${second.visitor.id}`, {
      token: tenant.apiKey,
      body: { externalId: first.body.externalId },
    });
    expect(now.status, now.text).toBe(200);
  });

  it('is 404 for another organization’s visitor and 403 for visitors', async () => {
    const theirs = await createVisitor(other.widgetKey);
    expect((await call('GET', `/api/visitors/${theirs.visitor.id}`, { token: tenant.apiKey })).status).toBe(
      404,
    );
    expect(
      (
        await call('PATCH', `/api/visitors/${theirs.visitor.id}`, {
          token: tenant.apiKey,
          body: { name: 'x' },
        })
      ).status,
    ).toBe(404);
    expect((await call('GET', '/api/visitors', { token: theirs.token })).status).toBe(403);
    expect((await call('GET', `/api/visitors/${theirs.visitor.id}`, { token: theirs.token })).status).toBe(
      403,
    );
  });
});

describe('GET /api/visitors', () => {
  it('lists newest lastSeenAt first with a cursor, keeping organizations apart', async () => {
    const fresh = await createTenant();
    const made: string[] = [];
    for (let i = 0; i < 3; i++) made.push((await createVisitor(fresh.widgetKey)).visitor.id);
    // The listing reads an index: it may show the new visitors up to 2 s later.
    const first = await eventuallyIndexed(
      () => call<Page>('GET', '/api/visitors?limit=2', { token: fresh.apiKey }),
      (answer) =>
        sameIds(
          answer.body.data.map((visitor) => visitor.id),
          [made[2], made[1]],
        ),
    );
    expect(first.body.data.map((visitor) => visitor.id)).toEqual([made[2], made[1]]);
    const second = await eventuallyIndexed(
      () =>
        call<Page>('GET', `/api/visitors?limit=2&cursor=${encodeURIComponent(first.body.nextCursor ?? '')}`, {
          token: fresh.apiKey,
        }),
      (answer) =>
        sameIds(
          answer.body.data.map((visitor) => visitor.id),
          [made[0]],
        ),
    );
    expect(second.body.data.map((visitor) => visitor.id)).toEqual([made[0]]);
    expect(second.body.nextCursor).toBeNull();
  });

  it('syncs changes oldest first with updatedSince, resuming exactly, done at the end', async () => {
    const fresh = await createTenant();
    const since = new Date().toISOString();
    const a = await upsert('a', { name: 'A' }, fresh.apiKey);
    const b = await upsert('b', { name: 'B' }, fresh.apiKey);
    const page = await eventually(
      async () =>
        (await call<Page>('GET', `/api/visitors?updatedSince=${since}&limit=1`, { token: fresh.apiKey }))
          .body,
      (found) => found.data.length === 1,
    );
    expect(page.data.map((visitor) => visitor.id)).toEqual([a.body.id]);
    expect(page.done).toBe(false);
    // Changes are served once settled (about a second): poll as a sync client does.
    const rest = await eventually(
      () =>
        call<Page>(
          'GET',
          `/api/visitors?updatedSince=${since}&cursor=${encodeURIComponent(page.nextCursor ?? '')}`,
          {
            token: fresh.apiKey,
          },
        ),
      (found) => found.body.data.length > 0,
    );
    expect(rest.body.data.map((visitor) => visitor.id)).toEqual([b.body.id]);
    expect(rest.body.done).toBe(true);
    expect(rest.body.nextCursor).toEqual(expect.any(String));
    // A change after the end is served once from the same cursor, and nothing else is.
    await upsert('a', { name: 'A2' }, fresh.apiKey);
    const later = await eventually(
      async () =>
        (
          await call<Page>(
            'GET',
            `/api/visitors?updatedSince=${since}&cursor=${encodeURIComponent(rest.body.nextCursor ?? '')}`,
            {
              token: fresh.apiKey,
            },
          )
        ).body,
      (found) => found.data.length > 0,
    );
    expect(later.data.map((visitor) => [visitor.id, visitor.name])).toEqual([[a.body.id, 'A2']]);
  });
});

describe('visitor events', () => {
  it('announces visitor.created and visitor.updated in the feed and the webhook catalog', async () => {
    const fresh = await createTenant();
    const made = await upsert('evented', { name: 'E' }, fresh.apiKey);
    await upsert('evented', { name: 'E2' }, fresh.apiKey);
    const events = await eventually(
      async () =>
        (
          await call<{ data: { type: string; data: Profile }[] }>(
            'GET',
            '/api/events?types=visitor.created,visitor.updated',
            { token: fresh.apiKey },
          )
        ).body.data,
      (found) => found.length >= 2,
    );
    expect(events.map((event) => [event.type, event.data.id])).toEqual([
      ['visitor.created', made.body.id],
      ['visitor.updated', made.body.id],
    ]);
    const catalog = await call<{ events: { event: string }[] }>('GET', '/api/webhooks/events', {
      token: fresh.apiKey,
    });
    expect(catalog.body.events.map((entry) => entry.event)).toEqual(
      expect.arrayContaining(['visitor.created', 'visitor.updated', 'visitor.merged', 'visitor.erased']),
    );
  });
});
