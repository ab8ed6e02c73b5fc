import { activityItems } from './activity-seed';
import type { FixtureContext } from './conversation-scenarios';
import { fixtureApiKey, stringAt } from './fixtures';
import type { Scenario } from './round-trips';

const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const OPERATORS = 10;

/**
 * Scenarios for the survey, CSAT and analytics-export routes, and for the conversation writes that
 * move the daily aggregates (a PATCH that closes; a bulk delete of conversations with responses).
 * The demo organization gets 90 days of aggregates first, written straight to the table (unmeasured):
 * all 8 shards of every day with every counter set, and 10 operators with responses every day, so
 * the CSAT and export rows show the read cost of a busy organization, whatever its size. The export
 * is measured on an organization of its own with the same aggregates, and the items of a busy day
 * (activity-seed.ts) where the default window cuts a day: whole days cost what the days asked cost,
 * part-days what their hours hold. Fixtures (conversations, responses to delete) are made by a
 * fixture API key, never by the measured one.
 */
export async function statsScenarios(context: Omit<FixtureContext, 'conversationId'>): Promise<Scenario[]> {
  const { demo, request, nowMs } = context;
  const apiKey = demo.apiKey;
  const fixtureKey = await fixtureApiKey(context, 'stats');
  // Loaded here: the data layer reads its configuration (the local stack's table) at import.
  const { batchPut } = await import('../shared/db/batch');
  const { keys } = await import('../shared/db/keys');
  const { STATS_SHARDS } = await import('../shared/db/stats');

  const orgId = demo.organizationId;
  const operatorIds = Array.from({ length: OPERATORS }, () => crypto.randomUUID());
  const items: Record<string, unknown>[] = [];
  const dayCounters = (owner: string, day: string) => {
    for (let shard = 0; shard < STATS_SHARDS; shard++) {
      items.push({
        ...keys.statsShard(owner, day, shard),
        entity: 'stats',
        day,
        created: 14,
        closed: 12,
        msgVisitor: 160,
        msgOperator: 140,
        frtCount: 11,
        frtSumMs: 2_345_678,
        ...Object.fromEntries(
          Array.from({ length: 14 }, (_, i) => [`frt${String(i).padStart(2, '0')}`, i + 1]),
        ),
        csatCount: 5,
        csatSum: 19,
        csat1: 1,
        csat2: 1,
        csat3: 1,
        csat4: 1,
        csat5: 1,
      });
    }
  };
  // The analytics export is measured on an organization of its own: its seeded events, in the demo
  // organization's feed, would reach the stream's consumers and the feed's scenarios.
  const analyticsOrg = stringAt(
    await request(
      {
        method: 'POST',
        path: '/api/admin/organizations',
        token: context.platform,
        body: { name: 'Bench analytics', modules: ['automation_api'] },
      },
      201,
      'create the analytics organization',
    ),
    'id',
  );
  const analyticsKey = stringAt(
    await request(
      {
        method: 'POST',
        path: `/api/admin/organizations/${analyticsOrg}/api-keys`,
        token: context.platform,
        body: { name: 'Bench analytics export' },
      },
      201,
      'create the analytics API key',
    ),
    'key',
  );
  for (let back = 0; back < 90; back++) {
    const day = new Date(nowMs() - back * DAY_MS).toISOString().slice(0, 10);
    dayCounters(orgId, day);
    dayCounters(analyticsOrg, day);
    for (const operatorId of operatorIds)
      items.push({
        ...keys.statsOperatorDay(orgId, day, operatorId),
        entity: 'stats',
        day,
        operatorId,
        csatCount: 4,
        csatSum: 15,
      });
  }
  // The part-days a default export reads item by item: all of the day 30 days back (the export
  // reads whichever side of its bound is shorter) and today until now.
  const now = nowMs();
  const firstDay = now - 30 * DAY_MS - ((now - 30 * DAY_MS) % DAY_MS);
  items.push(
    ...(await activityItems(analyticsOrg, firstDay, firstDay + DAY_MS)),
    ...(await activityItems(analyticsOrg, now - (now % DAY_MS), now)),
  );
  // A thousand at a time: all ~9,000 at once would queue hundreds of calls on the client's 50 sockets.
  for (let i = 0; i < items.length; i += 1_000) await batchPut(items.slice(i, i + 1_000));

  const openConversation = async (): Promise<string> =>
    stringAt(
      await request(
        {
          method: 'POST',
          path: '/api/conversations',
          token: fixtureKey,
          body: { visitorId: demo.visitorId, message: 'Is my parcel lost?' },
        },
        201,
        'open a conversation',
      ),
      'id',
    );
  /** A conversation assigned to the demo admin, as a survey usually finds it (its operator is credited). */
  const assignedConversation = async (): Promise<string> => {
    const id = await openConversation();
    await request(
      {
        method: 'PATCH',
        path: `/api/conversations/${id}`,
        token: fixtureKey,
        body: { operatorId: demo.adminOperatorId },
      },
      200,
      'assign a conversation',
    );
    return id;
  };
  const answered = async (conversationId: string): Promise<string> =>
    stringAt(
      await request(
        {
          method: 'POST',
          path: '/api/surveys',
          token: fixtureKey,
          body: { conversationId, visitorId: demo.visitorId, score: 4 },
        },
        201,
        'record a survey response',
      ),
      'id',
    );
  const listed = await assignedConversation();
  await answered(listed);

  return [
    {
      route: 'GET /api/surveys',
      target: 'childRead',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: `/api/surveys?conversationId=${listed}`, token: apiKey }),
    },
    {
      route: 'POST /api/surveys',
      caller: 'visitor',
      expectedStatus: 201,
      target: 'transaction',
      call: async () => ({
        method: 'POST',
        path: '/api/surveys',
        token: demo.visitorToken,
        body: { conversationId: await assignedConversation(), score: 5, comment: 'Quick and friendly' },
      }),
    },
    {
      route: 'DELETE /api/surveys/{id}',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'transaction',
      call: async () => ({
        method: 'DELETE',
        path: `/api/surveys/${await answered(await assignedConversation())}`,
        token: apiKey,
      }),
    },
    {
      route: 'GET /api/analytics/csat',
      // Issue 11: the day aggregates of the period in one or two Queries, whatever the organization's size.
      target: 'listing',
      variant: '90d: 8 shards × 90 days, 10 operators',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: '/api/analytics/csat?period=90d', token: apiKey }),
    },
    {
      route: 'GET /api/analytics/csat',
      // Issue 11: the day aggregates of the period in one or two Queries, whatever the organization's size.
      target: 'listing',
      variant: '7d',
      caller: 'operator',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: '/api/analytics/csat?period=7d', token: demo.adminSession }),
    },
    {
      route: 'GET /api/export/analytics',
      variant: '30 days (default, to the request time; busy edge days)',
      // Issue 23: whole days from the day aggregates beside the part-days' events and responses
      // (one trip), then the answered conversations in one BatchGetItem.
      target: 'listing',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: '/api/export/analytics', token: analyticsKey }),
    },
    {
      route: 'GET /api/export/analytics',
      variant: '365 days (a date 365 days back, to the request time)',
      target: 'listing',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({
        method: 'GET',
        path: `/api/export/analytics?date_from=${dayOf(nowMs() - 365 * DAY_MS)}`,
        token: analyticsKey,
      }),
    },
    {
      route: 'GET /api/export/analytics',
      variant: '366 whole days (dates)',
      // Issue 9: whole days cost what the days asked cost, not the data: a year's day aggregates are
      // four Queries side by side (one trip).
      target: 'listing',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({
        method: 'GET',
        path: `/api/export/analytics?date_from=${dayOf(nowMs() - 365 * DAY_MS)}&date_to=${dayOf(nowMs() + DAY_MS)}`,
        token: analyticsKey,
      }),
    },
    {
      route: 'PATCH /api/conversations/{id}',
      variant: 'close',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'transaction',
      call: async () => ({
        method: 'PATCH',
        path: `/api/conversations/${await openConversation()}`,
        token: apiKey,
        body: { status: 'closed' },
      }),
    },
    {
      route: 'POST /api/conversations/bulk-delete',
      variant: '3 ids with responses',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'bulk',
      call: async () => {
        const ids = await Promise.all([0, 1, 2].map(() => assignedConversation()));
        for (const id of ids) await answered(id);
        return {
          method: 'POST',
          path: '/api/conversations/bulk-delete',
          token: apiKey,
          body: { conversationIds: ids },
        };
      },
    },
  ];
}
