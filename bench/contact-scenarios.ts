import type { FixtureContext } from './conversation-scenarios';
import { stringAt } from './fixtures';
import type { Scenario } from './round-trips';

/**
 * Scenarios of issue 27: the audit log, visitors as contacts and incremental sync. The visitor
 * written by PATCH and by the upsert's update is made here, unmeasured; each PATCH changes the name
 * (a real change), each created upsert names a new external id.
 */
export async function contactScenarios(context: Omit<FixtureContext, 'conversationId'>): Promise<Scenario[]> {
  const { demo, request } = context;
  const apiKey = demo.apiKey;
  const fixture = await request(
    {
      method: 'PUT',
      path: '/api/visitors/by-external-id/bench-fixture',
      token: apiKey,
      body: { name: 'Bench' },
    },
    201,
    'upsert a bench visitor',
  ).catch(async () =>
    request(
      { method: 'PUT', path: '/api/visitors/by-external-id/bench-fixture', token: apiKey, body: {} },
      200,
      'read the bench visitor',
    ),
  );
  const visitorId = stringAt(fixture, 'id');
  let sequence = 0;
  /** A fresh visitor (unmeasured: written while the attempt is prepared). */
  const freshVisitor = async () =>
    stringAt(
      await request(
        {
          method: 'PUT',
          path: `/api/visitors/by-external-id/bench-${crypto.randomUUID()}`,
          token: apiKey,
          body: { name: 'Fresh', metadata: { plan: 'free' } },
        },
        201,
        'upsert a fresh visitor',
      ),
      'id',
    );
  /** A source with two conversations to move into a target: a merge of a visitor's usual few. */
  const mergePair = async () => {
    const [target, source] = await Promise.all([freshVisitor(), freshVisitor()]);
    for (let i = 0; i < 2; i++)
      await request(
        {
          method: 'POST',
          path: '/api/conversations',
          token: apiKey,
          body: { visitorId: source, message: `Conversation ${i}` },
        },
        201,
        'a conversation of the merge source',
      );
    return { target, source };
  };
  const since = new Date(context.nowMs() - 3_600_000).toISOString();
  return [
    {
      route: 'GET /api/audit-events',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'listing',
      call: () => ({ method: 'GET', path: '/api/audit-events?limit=20', token: apiKey }),
    },
    {
      route: 'GET /api/admin/audit-events',
      caller: 'platform',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: '/api/admin/audit-events?limit=20', token: context.platform }),
    },
    {
      route: 'GET /api/visitors',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'listing',
      call: () => ({ method: 'GET', path: '/api/visitors?limit=20', token: apiKey }),
    },
    {
      route: 'GET /api/visitors',
      variant: 'updatedSince',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'listing',
      call: () => ({ method: 'GET', path: `/api/visitors?limit=20&updatedSince=${since}`, token: apiKey }),
    },
    {
      route: 'GET /api/conversations',
      variant: 'updatedSince',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'listing',
      call: () => ({
        method: 'GET',
        path: `/api/conversations?limit=20&updatedSince=${since}`,
        token: apiKey,
      }),
    },
    {
      route: 'GET /api/visitors/{id}',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: `/api/visitors/${visitorId}`, token: apiKey }),
    },
    {
      route: 'PATCH /api/visitors/{id}',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({
        method: 'PATCH',
        path: `/api/visitors/${visitorId}`,
        token: apiKey,
        body: { name: `Bench ${++sequence}` },
      }),
    },
    {
      route: 'POST /api/visitors/{id}/merge',
      caller: 'apiKey',
      expectedStatus: 200,
      // Both visitors, the event and the audit entry in one transaction; then the moves (a
      // conversation each: read, Update).
      target: 'bulk',
      call: async () => {
        const { target, source } = await mergePair();
        return {
          method: 'POST',
          path: `/api/visitors/${target}/merge`,
          token: apiKey,
          body: { sourceVisitorId: source },
        };
      },
    },
    {
      route: 'DELETE /api/visitors/{id}',
      caller: 'apiKey',
      expectedStatus: 202,
      target: 'transaction',
      call: async () => ({ method: 'DELETE', path: `/api/visitors/${await freshVisitor()}`, token: apiKey }),
    },
    {
      route: 'PUT /api/visitors/by-external-id/{externalId}',
      variant: 'created',
      caller: 'apiKey',
      expectedStatus: 201,
      call: () => ({
        method: 'PUT',
        path: `/api/visitors/by-external-id/bench-${crypto.randomUUID()}`,
        token: apiKey,
        body: { name: 'New' },
      }),
    },
    {
      route: 'PUT /api/visitors/by-external-id/{externalId}',
      variant: 'updated',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({
        method: 'PUT',
        path: '/api/visitors/by-external-id/bench-fixture',
        token: apiKey,
        body: { name: `Bench ${++sequence}` },
      }),
    },
  ];
}
