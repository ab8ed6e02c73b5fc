import { beforeAll, describe, expect, it } from 'vitest';
import { clock } from '../../shared/clock';
import { type ApiResponse, call, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { useInProcessStack } from '../helpers/in-process-stack';

/**
 * Operator teams and the operators listing through the gateway, as an integrator meets them: the
 * per-organization creation limit, members (also racing), tenancy, offset pages, and conversations'
 * `teamId` with the exact "no deletion while open conversations are assigned" rule. In-process, so
 * the clock can be moved to a fresh rate-limit window.
 */
const stack = useInProcessStack();

type Team = {
  id: string;
  orgId: string;
  name: string;
  description: string | null;
  priority: number;
  memberIds: string[];
  createdAt: string;
  updatedAt: string;
};
type Page<T> = {
  data: T[];
  pagination: {
    totalItems: number;
    page: number;
    pageSize: number;
    hasNextPage: boolean;
    hasPrevPage: boolean;
  };
};
type Operator = { id: string; orgId: string; role: string; teamIds: string[] };
type Conversation = { id: string; teamId: string | null; status: string };
type ErrorBody = {
  error: { code: string; details?: { field?: string; reason?: string; openConversations?: number } };
};

const errorOf = (response: ApiResponse<unknown>) => (response.body as ErrorBody).error;

let tenant: Tenant;
let other: Tenant;
let visitorId: string;

/** Moves the service's clock to the start of the next minute: a fresh team-creation window. */
function freshWindow(): void {
  const now = clock.nowMs();
  stack.advance(60_000 - (now % 60_000) + 50);
}

const createTeam = (body: Record<string, unknown>, token = tenant.apiKey) =>
  call<Team>('POST', '/api/operator-teams', { token, body });

async function newTeam(body: Record<string, unknown> = {}, owner: Tenant = tenant): Promise<Team> {
  const created = await createTeam({ name: 'Support', ...body }, owner.apiKey);
  if (created.status !== 201) throw new Error(`create team: ${created.status} ${created.text}`);
  return created.body;
}

const patchConversation = (id: string, body: Record<string, unknown>) =>
  call<Conversation>('PATCH', `/api/conversations/${id}`, { token: tenant.apiKey, body });

async function newConversation(): Promise<Conversation> {
  const created = await call<Conversation>('POST', '/api/conversations', {
    token: tenant.apiKey,
    body: { visitorId },
  });
  if (created.status !== 201) throw new Error(`create conversation: ${created.status} ${created.text}`);
  return created.body;
}

const deleteTeam = (id: string, token = tenant.apiKey) =>
  call('DELETE', `/api/operator-teams/${id}`, { token });

beforeAll(async () => {
  tenant = await createTenant();
  other = await createTenant();
  visitorId = (await createVisitor(tenant.widgetKey)).visitor.id;
  freshWindow();
});

describe('team creation', () => {
  it('creates a team with defaults, for admins and API keys only, and validates every field', async () => {
    const created = await createTeam({ name: 'Billing' }, tenant.adminSession);
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      orgId: tenant.orgId,
      name: 'Billing',
      description: null,
      priority: 0,
      memberIds: [],
    });
    expect(created.body.createdAt).toBe(created.body.updatedAt);
    expect(created.headers.get('RateLimit-Limit')).toBe('30');

    const full = await createTeam({ name: 'VIP', description: 'Key accounts', priority: 100 });
    expect(full.body).toMatchObject({ description: 'Key accounts', priority: 100 });

    expect((await createTeam({ name: 'Nope' }, tenant.operatorSession)).status).toBe(403);
    for (const [body, field] of [
      [{ name: 'x', priority: 101 }, 'priority'],
      [{ name: 'x', priority: -1 }, 'priority'],
      [{ name: 'x', priority: 1.5 }, 'priority'],
      [{ name: '' }, 'name'],
      [{ priority: 1 }, 'name'],
      [{ name: 'x', colour: 'red' }, 'colour'],
    ] as const) {
      const refused = await createTeam(body);
      expect(refused.status, JSON.stringify(body)).toBe(422);
      expect(errorOf(refused).details?.field).toBe(field);
    }
  });

  it('allows 30 creations a minute per organization: the 31st is 429 with Retry-After and RateLimit headers', async () => {
    const limited = await createTenant();
    const unaffected = await createTenant();
    freshWindow();
    const first = await Promise.all(
      Array.from({ length: 30 }, (_, i) => createTeam({ name: `Team ${i}` }, limited.apiKey)),
    );
    expect(first.map((response) => response.status)).toEqual(Array(30).fill(201));
    const remaining = first.map((response) => Number(response.headers.get('RateLimit-Remaining'))).sort();
    expect(Math.min(...remaining)).toBe(0);

    // Whoever asks: another credential of the same organization is refused too.
    for (const token of [limited.apiKey, limited.adminSession]) {
      const refused = await createTeam({ name: 'One too many' }, token);
      expect(refused.status).toBe(429);
      expect(errorOf(refused).code).toBe('RATE_LIMITED');
      const retryAfter = Number(refused.headers.get('Retry-After'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(refused.headers.get('RateLimit-Limit')).toBe('30');
      expect(refused.headers.get('RateLimit-Remaining')).toBe('0');
      expect(refused.headers.get('RateLimit-Reset')).toBe(String(retryAfter));
    }
    const listed = await call<Page<Team>>('GET', '/api/operator-teams?limit=100', { token: limited.apiKey });
    expect(listed.body.pagination.totalItems).toBe(30);

    // The limit is the organization's own.
    expect((await createTeam({ name: 'Elsewhere' }, unaffected.apiKey)).status).toBe(201);
    // Invalid requests do not count, so they never eat into the next window.
    freshWindow();
    expect((await createTeam({ name: 'x', priority: 500 }, limited.apiKey)).status).toBe(422);
    const next = await createTeam({ name: 'Next minute' }, limited.apiKey);
    expect(next.status).toBe(201);
    expect(next.headers.get('RateLimit-Remaining')).toBe('29');
  });
});

describe('team creation with Idempotency-Key', () => {
  it('replays the first answer without creating or counting a second team', async () => {
    const owner = await createTenant();
    freshWindow();
    const send = () =>
      call<Team>('POST', '/api/operator-teams', {
        token: owner.apiKey,
        headers: { 'Idempotency-Key': 'create-support-team' },
        body: { name: 'Support' },
      });
    const first = await send();
    expect(first.status).toBe(201);
    expect(first.headers.get('RateLimit-Remaining')).toBe('29');
    const replay = await send();
    expect(replay.status).toBe(201);
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    expect(replay.body.id).toBe(first.body.id);
    // The replay reports the credential's limit of the moment, not the stored team window.
    expect(replay.headers.get('RateLimit-Limit')).not.toBe('30');
    const next = await createTeam({ name: 'Another' }, owner.apiKey);
    expect(next.headers.get('RateLimit-Remaining')).toBe('28');
    const listed = await call<Page<Team>>('GET', '/api/operator-teams', { token: owner.apiKey });
    expect(listed.body.pagination.totalItems).toBe(2);
  });
});

describe('team reads and changes', () => {
  it('lists teams in offset pages, highest priority first', async () => {
    const owner = await createTenant();
    freshWindow();
    const low = await newTeam({ name: 'Low', priority: 1 }, owner);
    const high = await newTeam({ name: 'High', priority: 90 }, owner);
    const middle = await newTeam({ name: 'Middle', priority: 50 }, owner);
    const first = await call<Page<Team>>('GET', '/api/operator-teams?limit=2', {
      token: owner.operatorSession,
    });
    expect(first.status).toBe(200);
    expect(first.body.data.map((team) => team.id)).toEqual([high.id, middle.id]);
    expect(first.body.pagination).toEqual({
      totalItems: 3,
      page: 1,
      pageSize: 2,
      hasNextPage: true,
      hasPrevPage: false,
    });
    const second = await call<Page<Team>>('GET', '/api/operator-teams?limit=2&offset=2', {
      token: owner.apiKey,
    });
    expect(second.body.data.map((team) => team.id)).toEqual([low.id]);
    expect(second.body.pagination).toMatchObject({ page: 2, hasNextPage: false, hasPrevPage: true });
    expect((await call('GET', '/api/operator-teams?limit=101', { token: owner.apiKey })).status).toBe(422);
  });

  it('patches only the fields sent; a body that changes nothing keeps updatedAt', async () => {
    const team = await newTeam({ name: 'Returns', description: 'Parcels back', priority: 10 });
    const path = `/api/operator-teams/${team.id}`;
    const changed = await call<Team>('PATCH', path, { token: tenant.adminSession, body: { priority: 20 } });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({ name: 'Returns', description: 'Parcels back', priority: 20 });
    expect(changed.body.updatedAt > team.updatedAt).toBe(true);
    const same = await call<Team>('PATCH', path, {
      token: tenant.apiKey,
      body: { priority: 20, name: 'Returns' },
    });
    expect(same.body.updatedAt).toBe(changed.body.updatedAt);
    const cleared = await call<Team>('PATCH', path, { token: tenant.apiKey, body: { description: null } });
    expect(cleared.body.description).toBeNull();
    expect((await call<Team>('GET', path, { token: tenant.apiKey })).body).toEqual(cleared.body);
    expect((await call('PATCH', path, { token: tenant.apiKey, body: { priority: 101 } })).status).toBe(422);
    expect((await call('PATCH', path, { token: tenant.operatorSession, body: { priority: 1 } })).status).toBe(
      403,
    );
  });

  it('treats another organization’s team as missing (404) everywhere', async () => {
    const foreign = await newTeam({ name: 'Theirs' }, other);
    const path = `/api/operator-teams/${foreign.id}`;
    const token = tenant.apiKey;
    expect((await call('GET', path, { token })).status).toBe(404);
    expect((await call('PATCH', path, { token, body: { name: 'Mine now' } })).status).toBe(404);
    expect((await call('DELETE', path, { token })).status).toBe(404);
    expect(
      (await call('POST', `${path}/members`, { token, body: { operatorId: tenant.operatorId } })).status,
    ).toBe(404);
    expect((await call('DELETE', `${path}/members/${other.operatorId}`, { token })).status).toBe(404);
    expect((await call('GET', '/api/operator-teams/not-a-uuid', { token })).status).toBe(404);
    const theirs = await call<Team>('GET', path, { token: other.apiKey });
    expect(theirs.body).toMatchObject({ name: 'Theirs', memberIds: [] });
  });
});

describe('members', () => {
  it('adds and removes members: 409 when already one, 422 for another organization’s operator, 404 when not one', async () => {
    const team = await newTeam({ name: 'Members' });
    const members = `/api/operator-teams/${team.id}/members`;
    const add = (operatorId: string) =>
      call('POST', members, { token: tenant.adminSession, body: { operatorId } });
    const added = await add(tenant.operatorId);
    expect(added.status, added.text).toBe(200);
    expect(added.body).toEqual({ success: true });
    expect((await add(tenant.adminOperatorId)).status).toBe(200);
    const again = await add(tenant.operatorId);
    expect(again.status).toBe(409);
    expect(errorOf(again).details?.reason).toBe('already_member');

    const foreign = await add(other.operatorId);
    expect(foreign.status).toBe(422);
    expect(errorOf(foreign).details?.field).toBe('operatorId');
    expect(errorOf(await add(crypto.randomUUID())).details?.field).toBe('operatorId');
    expect(
      (
        await call('POST', `/api/operator-teams/${crypto.randomUUID()}/members`, {
          token: tenant.apiKey,
          body: { operatorId: tenant.operatorId },
        })
      ).status,
    ).toBe(404);

    const read = await call<Team>('GET', `/api/operator-teams/${team.id}`, { token: tenant.apiKey });
    expect(read.body.memberIds).toEqual([tenant.adminOperatorId, tenant.operatorId].sort());

    const remove = (operatorId: string) =>
      call('DELETE', `${members}/${operatorId}`, { token: tenant.apiKey });
    expect((await remove(tenant.operatorId)).status).toBe(200);
    expect((await remove(tenant.operatorId)).status).toBe(404);
    expect((await remove(other.operatorId)).status).toBe(404);
    const after = await call<Team>('GET', `/api/operator-teams/${team.id}`, { token: tenant.apiKey });
    expect(after.body.memberIds).toEqual([tenant.adminOperatorId]);
    expect((await remove(tenant.adminOperatorId)).status).toBe(200);
    expect(
      (await call<Team>('GET', `/api/operator-teams/${team.id}`, { token: tenant.apiKey })).body.memberIds,
    ).toEqual([]);
  });

  it('lets exactly one of several concurrent adds of the same operator succeed (the others 409)', async () => {
    for (let round = 0; round < 3; round++) {
      const team = await newTeam({ name: `Race ${round}` });
      const results = await Promise.all(
        Array.from({ length: 6 }, () =>
          call('POST', `/api/operator-teams/${team.id}/members`, {
            token: tenant.apiKey,
            body: { operatorId: tenant.operatorId },
          }),
        ),
      );
      const statuses = results.map((result) => result.status).sort();
      expect(statuses).toEqual([200, 409, 409, 409, 409, 409]);
      const read = await call<Team>('GET', `/api/operator-teams/${team.id}`, { token: tenant.apiKey });
      expect(read.body.memberIds).toEqual([tenant.operatorId]);
    }
  });
});

describe('GET /api/operators', () => {
  it('pages the organization’s operators with their teamIds, filtered by role', async () => {
    const owner = await createTenant();
    freshWindow();
    const first = await newTeam({ name: 'First' }, owner);
    const second = await newTeam({ name: 'Second' }, owner);
    for (const team of [first, second]) {
      await call('POST', `/api/operator-teams/${team.id}/members`, {
        token: owner.apiKey,
        body: { operatorId: owner.operatorId },
      });
    }
    const all = await call<Page<Operator>>('GET', '/api/operators', { token: owner.apiKey });
    expect(all.status, all.text).toBe(200);
    expect(all.body.data.map((operator) => [operator.id, operator.role, operator.teamIds])).toEqual([
      [owner.adminOperatorId, 'admin', []],
      [owner.operatorId, 'operator', [first.id, second.id]],
    ]);
    expect(all.body.data.every((operator) => operator.orgId === owner.orgId)).toBe(true);
    expect(all.body.pagination).toMatchObject({ totalItems: 2, page: 1, hasNextPage: false });

    const admins = await call<Page<Operator>>('GET', '/api/operators?role=admin', {
      token: owner.operatorSession,
    });
    expect(admins.body.data.map((operator) => operator.id)).toEqual([owner.adminOperatorId]);
    expect(admins.body.pagination.totalItems).toBe(1);
    const secondPage = await call<Page<Operator>>('GET', '/api/operators?limit=1&offset=1', {
      token: owner.apiKey,
    });
    expect(secondPage.body.data.map((operator) => operator.id)).toEqual([owner.operatorId]);
    expect(secondPage.body.pagination).toMatchObject({ page: 2, pageSize: 1, hasPrevPage: true });
    expect((await call('GET', '/api/operators?role=owner', { token: owner.apiKey })).status).toBe(422);
    const visitor = await createVisitor(owner.widgetKey);
    expect((await call('GET', '/api/operators', { token: visitor.token })).status).toBe(403);
  });
});

describe('conversations and teams', () => {
  it('accepts a team of the organization, refuses another organization’s (422), and records team transfers', async () => {
    const first = await newTeam({ name: 'Tier 1' });
    const second = await newTeam({ name: 'Tier 2' });
    const foreign = await newTeam({ name: 'Foreign' }, other);
    const conversation = await newConversation();
    const refused = await patchConversation(conversation.id, { teamId: foreign.id });
    expect(refused.status).toBe(422);
    expect(errorOf(refused).details?.field).toBe('teamId');

    expect((await patchConversation(conversation.id, { teamId: first.id })).body.teamId).toBe(first.id);
    await patchConversation(conversation.id, { teamId: second.id, operatorId: tenant.operatorId });
    await patchConversation(conversation.id, { teamId: null });
    const history = await call<{
      events: {
        type: string;
        fromOperatorId: string | null;
        toOperatorId: string | null;
        fromTeamId: string | null;
        teamId: string | null;
      }[];
    }>('GET', `/api/conversations/${conversation.id}/assignment-history`, { token: tenant.apiKey });
    expect(
      history.body.events.map((event) => [
        event.type,
        event.fromOperatorId,
        event.toOperatorId,
        event.fromTeamId,
        event.teamId,
      ]),
    ).toEqual([
      ['assigned', null, null, null, first.id],
      ['assigned', null, tenant.operatorId, first.id, second.id],
      ['unassigned', tenant.operatorId, tenant.operatorId, second.id, null],
    ]);
  });

  it('refuses to delete a team while a conversation that is not closed is assigned to it (409), then deletes it', async () => {
    const team = await newTeam({ name: 'Busy' });
    const open = await newConversation();
    const snoozed = await newConversation();
    await patchConversation(open.id, { teamId: team.id });
    await patchConversation(snoozed.id, { teamId: team.id });
    const until = new Date(clock.nowMs() + 3_600_000).toISOString();
    expect(
      (
        await call('POST', `/api/conversations/${snoozed.id}/snooze`, {
          token: tenant.apiKey,
          body: { until },
        })
      ).status,
    ).toBe(200);

    const refused = await deleteTeam(team.id);
    expect(refused.status).toBe(409);
    expect(errorOf(refused).details).toMatchObject({
      reason: 'team_has_open_conversations',
      openConversations: 2,
    });

    expect((await patchConversation(open.id, { status: 'closed' })).status).toBe(200);
    expect(errorOf(await deleteTeam(team.id)).details?.openConversations).toBe(1);
    const bulk = await call('POST', '/api/conversations/bulk-close', {
      token: tenant.apiKey,
      body: { conversationIds: [snoozed.id] },
    });
    expect(bulk.status).toBe(200);

    const deleted = await deleteTeam(team.id);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ success: true });
    expect((await deleteTeam(team.id)).status).toBe(404);
    expect((await call('GET', `/api/operator-teams/${team.id}`, { token: tenant.apiKey })).status).toBe(404);

    // Closed conversations keep the id; one can be reopened, but the deleted team is never named anew.
    const reopened = await patchConversation(open.id, { status: 'open' });
    expect(reopened.status, reopened.text).toBe(200);
    expect(reopened.body.teamId).toBe(team.id);
    const elsewhere = await newConversation();
    expect(errorOf(await patchConversation(elsewhere.id, { teamId: team.id })).details?.field).toBe('teamId');
  });

  it('counts moves between teams and deletions: a team is free once its conversations left or were deleted', async () => {
    const from = await newTeam({ name: 'From' });
    const to = await newTeam({ name: 'To' });
    const moved = await newConversation();
    const removed = await newConversation();
    await patchConversation(moved.id, { teamId: from.id });
    await patchConversation(removed.id, { teamId: to.id });
    await patchConversation(moved.id, { teamId: to.id });
    expect((await deleteTeam(from.id)).status).toBe(200);
    expect(errorOf(await deleteTeam(to.id)).details?.openConversations).toBe(2);
    await call('POST', '/api/conversations/bulk-delete', {
      token: tenant.apiKey,
      body: { conversationIds: [removed.id] },
    });
    await patchConversation(moved.id, { teamId: null });
    expect((await deleteTeam(to.id)).status).toBe(200);
  });

  it('never lets an assignment and a deletion racing on one team both succeed', async () => {
    for (let round = 0; round < 6; round++) {
      const team = await newTeam({ name: `Contested ${round}` });
      const conversation = await newConversation();
      const [assigned, deleted] = await Promise.all([
        patchConversation(conversation.id, { teamId: team.id }),
        deleteTeam(team.id),
      ]);
      const outcome = [assigned.status, deleted.status];
      expect([
        [200, 409],
        [422, 200],
      ]).toContainEqual(outcome);
      if (assigned.status === 200) {
        // The assignment won: the team stays until the conversation leaves it.
        expect((await call('GET', `/api/operator-teams/${team.id}`, { token: tenant.apiKey })).status).toBe(
          200,
        );
        await patchConversation(conversation.id, { status: 'closed' });
        expect((await deleteTeam(team.id)).status).toBe(200);
      }
    }
  });

  it('closes in bulk conversations of many teams (one count per team, chunks that fit a transaction)', async () => {
    const owner = await createTenant();
    const ownerVisitor = (await createVisitor(owner.widgetKey)).visitor.id;
    const teamIds: string[] = [];
    for (let batch = 0; batch < 2; batch++) {
      freshWindow();
      const created = await Promise.all(
        Array.from({ length: batch === 0 ? 30 : 10 }, (_, i) =>
          newTeam({ name: `Bulk ${batch}-${i}` }, owner),
        ),
      );
      teamIds.push(...created.map((team) => team.id));
    }
    const conversationIds: string[] = [];
    for (let start = 0; start < teamIds.length; start += 10) {
      conversationIds.push(
        ...(await Promise.all(
          teamIds.slice(start, start + 10).map(async (teamId) => {
            const created = await call<Conversation>('POST', '/api/conversations', {
              token: owner.apiKey,
              body: { visitorId: ownerVisitor },
            });
            const assigned = await call<Conversation>('PATCH', `/api/conversations/${created.body.id}`, {
              token: owner.apiKey,
              body: { teamId },
            });
            expect(assigned.status).toBe(200);
            return created.body.id;
          }),
        )),
      );
    }
    const blocked = await call('DELETE', `/api/operator-teams/${teamIds[39]}`, { token: owner.apiKey });
    expect(blocked.status).toBe(409);
    const closed = await call('POST', '/api/conversations/bulk-close', {
      token: owner.apiKey,
      body: { conversationIds },
    });
    expect(closed.status, closed.text).toBe(200);
    expect(closed.body).toEqual({ success: true, closed: 40 });
    const deleted = await Promise.all(
      teamIds.map((id) => call('DELETE', `/api/operator-teams/${id}`, { token: owner.apiKey })),
    );
    expect(deleted.map((response) => response.status)).toEqual(Array(40).fill(200));
  });
});
