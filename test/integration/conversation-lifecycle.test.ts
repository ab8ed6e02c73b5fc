import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { useInProcessStack } from '../helpers/in-process-stack';
import { eventuallyIndexed } from '../helpers/indexed';

const time = useInProcessStack();

type Conversation = Record<string, unknown> & {
  id: string;
  version: number;
  status: string;
  operatorId: string | null;
  snoozedUntil: string | null;
  metadata: Record<string, unknown>;
  language: string | null;
};
const errorOf = (response: ApiResponse<unknown>) =>
  (response.body as { error: { code: string; details?: Record<string, unknown> } }).error;

let tenant: Tenant;
let visitor: { token: string; visitor: { id: string } };

beforeAll(async () => {
  tenant = await createTenant();
  visitor = await createVisitor(tenant.widgetKey);
});

async function newConversation(token = tenant.apiKey): Promise<Conversation> {
  const body = token === visitor.token ? {} : { visitorId: visitor.visitor.id };
  return (await call<Conversation>('POST', '/api/conversations', { token, body })).body;
}

const patch = (id: string, body: unknown, headers: Record<string, string> = {}, token = tenant.apiKey) =>
  call<Conversation>('PATCH', `/api/conversations/${id}`, { token, body, headers });

describe('PATCH /api/conversations/{id}', () => {
  it('changes only the given fields, bumps the version once per change and answers the ETag', async () => {
    const created = await newConversation();
    const changed = await patch(created.id, {
      priority: 'urgent',
      tags: ['vip', 'vip', 'billing'],
      title: 'Refund',
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      priority: 'urgent',
      tags: ['vip', 'billing'],
      title: 'Refund',
      version: 2,
    });
    expect(changed.headers.get('etag')).toBe('"2"');
    const same = await patch(created.id, { priority: 'urgent' });
    expect(same.body.version).toBe(2);
    const read = await call<Conversation>('GET', `/api/conversations/${created.id}`, {
      token: tenant.apiKey,
    });
    expect(read.headers.get('etag')).toBe('"2"');
  });

  it('merges metadata key by key, removes keys set to null, and keeps the follow-up keys to their endpoints', async () => {
    const created = await newConversation();
    await patch(created.id, { metadata: { plan: 'pro', seats: 3 } });
    const merged = await patch(created.id, { metadata: { seats: null, region: 'eu' } });
    expect(merged.body.metadata).toEqual({ plan: 'pro', region: 'eu' });
    const reserved = await patch(created.id, { metadata: { followUpAt: '2099-01-01T00:00:00.000Z' } });
    expect(reserved.status).toBe(422);
    expect(errorOf(reserved).details?.field).toBe('metadata.followUpAt');
  });

  it('refuses unknown operators and teams (422) and snoozing by PATCH', async () => {
    const created = await newConversation();
    expect(errorOf(await patch(created.id, { operatorId: crypto.randomUUID() })).details?.field).toBe(
      'operatorId',
    );
    expect(errorOf(await patch(created.id, { teamId: crypto.randomUUID() })).details?.field).toBe('teamId');
    expect(errorOf(await patch(created.id, { status: 'snoozed' })).details?.field).toBe('status');
    const unchanged = await call<Conversation>('GET', `/api/conversations/${created.id}`, {
      token: tenant.apiKey,
    });
    expect(unchanged.body.version).toBe(1);
  });

  it('answers 412 with the current version when If-Match does not match', async () => {
    const created = await newConversation();
    const stale = await patch(created.id, { priority: 'low' }, { 'If-Match': '"7"' });
    expect(stale.status).toBe(412);
    expect(errorOf(stale)).toMatchObject({ code: 'PRECONDITION_FAILED', details: { currentVersion: 1 } });
    expect((await patch(created.id, { priority: 'low' }, { 'If-Match': '"1"' })).status).toBe(200);
    expect((await patch(created.id, { priority: 'high' }, { 'If-Match': 'garbage' })).status).toBe(412);
  });

  it('lets exactly one of 50 concurrent PATCHes with the same If-Match win', async () => {
    const created = await newConversation();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => patch(created.id, { title: `Title ${i}` }, { 'If-Match': '"1"' })),
    );
    const statuses = results.map((result) => result.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 412)).toHaveLength(49);
    const final = await call<Conversation>('GET', `/api/conversations/${created.id}`, {
      token: tenant.apiKey,
    });
    expect(final.body.version).toBe(2);
  });

  it('is refused to visitors (403)', async () => {
    const own = await newConversation(visitor.token);
    expect((await patch(own.id, { title: 'mine' }, {}, visitor.token)).status).toBe(403);
  });
});

describe('assignment history', () => {
  it('records assignments, transfers and unassignments with their actor, oldest first', async () => {
    const started = await call<Conversation>('POST', '/api/conversations', {
      token: tenant.operatorSession,
      body: { visitorId: visitor.visitor.id },
    });
    expect(started.body.operatorId).toBe(tenant.operatorId);
    await patch(started.body.id, { operatorId: tenant.adminOperatorId });
    await patch(started.body.id, { operatorId: null }, {}, tenant.adminSession);
    const history = await call<{
      events: {
        type: string;
        fromOperatorId: string | null;
        toOperatorId: string | null;
        actor: { type: string; id: string };
      }[];
    }>('GET', `/api/conversations/${started.body.id}/assignment-history`, { token: tenant.apiKey });
    expect(
      history.body.events.map((event) => [
        event.type,
        event.fromOperatorId,
        event.toOperatorId,
        event.actor.type,
      ]),
    ).toEqual([
      ['assigned', null, tenant.operatorId, 'operator'],
      ['transferred', tenant.operatorId, tenant.adminOperatorId, 'api_key'],
      ['unassigned', tenant.adminOperatorId, null, 'operator'],
    ]);
    const empty = await newConversation();
    expect(
      (await call('GET', `/api/conversations/${empty.id}/assignment-history`, { token: tenant.apiKey })).body,
    ).toEqual({ events: [] });
  });
});

describe('locale', () => {
  it('accepts only enabled locales and records who overrode it', async () => {
    const own = await newConversation(visitor.token);
    const path = `/api/conversations/${own.id}/locale`;
    const disabled = await call('PATCH', path, { token: tenant.apiKey, body: { locale: 'fr' } });
    expect(disabled.status).toBe(422);
    const byOperator = await call('PATCH', path, {
      token: tenant.operatorSession,
      body: { locale: 'en', locked: true },
    });
    expect(byOperator.body).toMatchObject({ locale: 'en', source: 'operator_override', locked: true });
    const byVisitor = await call('PATCH', path, { token: visitor.token, body: { locale: 'en' } });
    expect(byVisitor.body).toMatchObject({ locale: 'en', source: 'visitor_override', locked: true });
    const stranger = await createVisitor(tenant.widgetKey);
    expect((await call('PATCH', path, { token: stranger.token, body: { locale: 'en' } })).status).toBe(404);
    const read = await call<Conversation>('GET', `/api/conversations/${own.id}`, { token: tenant.apiKey });
    expect(read.body.language).toBe('en');
  });
});

describe('snooze and follow-up', () => {
  it('snoozes until a future time only, and unsnoozes back to open', async () => {
    const created = await newConversation();
    const path = `/api/conversations/${created.id}/snooze`;
    const past = await call('POST', path, {
      token: tenant.apiKey,
      body: { until: new Date(Date.now() - 60_000).toISOString() },
    });
    expect(past.status).toBe(422);
    expect(errorOf(past).details?.field).toBe('until');
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const snoozed = await call<Conversation>('POST', path, {
      token: tenant.apiKey,
      body: { until, reason: 'Waiting for the courier' },
    });
    expect(snoozed.body).toMatchObject({ status: 'snoozed', snoozedUntil: until, version: 2 });
    // The status listing reads an index, which may show the snooze a moment later.
    const listed = await eventuallyIndexed(
      () =>
        call<{ data: { id: string }[] }>('GET', '/api/conversations?status=snoozed', {
          token: tenant.apiKey,
        }),
      (answer) => answer.body.data.some((conversation) => conversation.id === created.id),
    );
    expect(listed.body.data.map((conversation) => conversation.id)).toContain(created.id);
    const woken = await call<Conversation>('DELETE', path, { token: tenant.apiKey });
    expect(woken.body).toMatchObject({ status: 'open', snoozedUntil: null, version: 3 });
    expect((await call<Conversation>('DELETE', path, { token: tenant.apiKey })).body.version).toBe(3);
  });

  it('stores the follow-up keys and clears only them, succeeding when none is set', async () => {
    const created = await newConversation();
    await patch(created.id, { metadata: { plan: 'pro' } });
    const path = `/api/conversations/${created.id}/follow-up`;
    const remindAt = new Date(Date.now() + 86_400_000).toISOString();
    const set = await call<Conversation>('PUT', path, {
      token: tenant.operatorSession,
      body: { remindAt, note: 'Call back' },
    });
    expect(set.body.metadata).toEqual({
      plan: 'pro',
      followUpAt: remindAt,
      followUpNote: 'Call back',
      followUpBy: tenant.operatorId,
    });
    expect((await call('DELETE', path, { token: tenant.apiKey })).body).toEqual({ success: true });
    expect((await call('DELETE', path, { token: tenant.apiKey })).body).toEqual({ success: true });
    const read = await call<Conversation>('GET', `/api/conversations/${created.id}`, {
      token: tenant.apiKey,
    });
    expect(read.body.metadata).toEqual({ plan: 'pro' });
    expect(
      (await call('DELETE', `/api/conversations/${crypto.randomUUID()}/follow-up`, { token: tenant.apiKey }))
        .status,
    ).toBe(404);
  });
});

describe('history window', () => {
  it('refuses conversations older than the window on every conversation endpoint (403 with its reason)', async () => {
    const windowed = await createTenant({ historyWindowDays: 1 });
    const guest = await createVisitor(windowed.widgetKey);
    const created = await call<Conversation>('POST', '/api/conversations', {
      token: guest.token,
      body: { message: 'hi' },
    });
    time.advance(2 * 86_400_000);
    const base = `/api/conversations/${created.body.id}`;
    for (const [method, suffix, body] of [
      ['GET', '', undefined],
      ['PATCH', '', { priority: 'high' }],
      ['GET', '/messages', undefined],
      ['POST', '/messages', { content: 'late', operatorId: windowed.operatorId }],
      ['POST', '/snooze', { until: new Date(Date.now() + 5 * 86_400_000).toISOString() }],
      ['GET', '/assignment-history', undefined],
    ] as const) {
      const response = await call(method, `${base}${suffix}`, { token: windowed.apiKey, body });
      expect(response.status, `${method} ${suffix}`).toBe(403);
      expect(errorOf(response).details?.reason).toBe('outside_history_window');
    }
    const listed = await call<{ data: unknown[] }>('GET', '/api/conversations', { token: windowed.apiKey });
    expect(listed.body.data).toEqual([]);
    time.reset();
    expect((await call('GET', base, { token: windowed.apiKey })).status).toBe(200);
  });
});

describe('converging writes', () => {
  type Operation =
    | { kind: 'patch'; body: Record<string, unknown> }
    | { kind: 'snooze'; hours: number }
    | { kind: 'unsnooze' }
    | { kind: 'locale'; locked: boolean }
    | { kind: 'clearFollowUp' };

  const operation: fc.Arbitrary<Operation> = fc.oneof(
    fc.record({
      kind: fc.constant('patch' as const),
      body: fc.record(
        {
          priority: fc.constantFrom('low', 'normal', 'high', 'urgent'),
          status: fc.constantFrom('open', 'pending', 'closed'),
          tags: fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 3 }),
          metadata: fc.dictionary(
            fc.constantFrom('x', 'y'),
            fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
          ),
        },
        { requiredKeys: [] },
      ),
    }),
    fc.record({ kind: fc.constant('snooze' as const), hours: fc.integer({ min: 1, max: 48 }) }),
    fc.constant({ kind: 'unsnooze' as const }),
    fc.record({ kind: fc.constant('locale' as const), locked: fc.boolean() }),
    fc.constant({ kind: 'clearFollowUp' as const }),
  );

  // Snoozes end at least a day ahead of the server's clock.
  const base = Date.now() + 86_400_000;
  async function apply(id: string, op: Operation): Promise<void> {
    const path = `/api/conversations/${id}`;
    const options = { token: tenant.apiKey };
    if (op.kind === 'patch') await call('PATCH', path, { ...options, body: op.body });
    if (op.kind === 'snooze')
      await call('POST', `${path}/snooze`, {
        ...options,
        body: { until: new Date(base + op.hours * 3_600_000).toISOString() },
      });
    if (op.kind === 'unsnooze') await call('DELETE', `${path}/snooze`, options);
    if (op.kind === 'locale')
      await call('PATCH', `${path}/locale`, { ...options, body: { locale: 'en', locked: op.locked } });
    if (op.kind === 'clearFollowUp') await call('DELETE', `${path}/follow-up`, options);
  }

  const stateOf = async (id: string) => {
    const { body } = await call<Conversation>('GET', `/api/conversations/${id}`, { token: tenant.apiKey });
    const { id: _id, version: _version, createdAt: _c, updatedAt: _u, lastMessageAt: _l, ...state } = body;
    return state;
  };

  it('reach the same state whether each write is sent once or retried', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(operation, { minLength: 1, maxLength: 6 }),
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 6, maxLength: 6 }),
        async (ops, repeats) => {
          const once = await newConversation();
          const retried = await newConversation();
          for (const [i, op] of ops.entries()) {
            await apply(once.id, op);
            for (let r = 0; r < (repeats[i] ?? 1); r++) await apply(retried.id, op);
          }
          expect(await stateOf(retried.id)).toEqual(await stateOf(once.id));
        },
      ),
      { numRuns: 15, seed: 7 },
    );
  });
});
