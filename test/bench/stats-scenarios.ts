import type { FixtureContext } from './conversation-scenarios';
import { fixtureApiKey, stringAt } from './fixtures';
import type { Scenario } from './round-trips';

const DAY_MS = 86_400_000;
const OPERATORS = 10;

/**
 * Scenarios for the survey, CSAT and analytics-export routes, and for the conversation writes that
 * move the daily aggregates (a PATCH that closes; a bulk delete of conversations with responses).
 * The demo organization gets 90 days of aggregates first, written straight to the table (unmeasured):
 * all 8 shards of every day with every counter set, and 10 operators with responses every day, so
 * the CSAT and export rows show the read cost of a busy organization, whatever its size. Fixtures
 * (conversations, responses to delete) are made by a fixture API key, never by the measured one.
 */
export async function statsScenarios(context: Omit<FixtureContext, 'conversationId'>): Promise<Scenario[]> {
  const { demo, request, nowMs } = context;
  const apiKey = demo.apiKey;
  const fixtureKey = await fixtureApiKey(context, 'stats');
  // Loaded here: the data layer reads its configuration (the local stack's table) at import.
  const { batchPut } = await import('../../shared/db/batch');
  const { keys } = await import('../../shared/db/keys');
  const { STATS_SHARDS } = await import('../../shared/db/stats');

  const orgId = demo.organizationId;
  const operatorIds = Array.from({ length: OPERATORS }, () => crypto.randomUUID());
  const items: Record<string, unknown>[] = [];
  for (let back = 0; back < 90; back++) {
    const day = new Date(nowMs() - back * DAY_MS).toISOString().slice(0, 10);
    for (let shard = 0; shard < STATS_SHARDS; shard++) {
      items.push({
        ...keys.statsShard(orgId, day, shard),
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
  await batchPut(items);

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
      variant: '30 days',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: '/api/export/analytics', token: apiKey }),
    },
    {
      route: 'GET /api/export/analytics',
      variant: '366 days',
      // Issue 9: the cost grows with the days asked, not the data; a year's day aggregates are
      // four Queries side by side (one trip).
      target: 'listing',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => {
        const to = new Date(nowMs()).toISOString().slice(0, 10);
        const from = new Date(nowMs() - 365 * DAY_MS).toISOString().slice(0, 10);
        return {
          method: 'GET',
          path: `/api/export/analytics?date_from=${from}&date_to=${to}`,
          token: apiKey,
        };
      },
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
