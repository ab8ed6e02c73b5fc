import type { FixtureContext } from './conversation-scenarios';
import { fixtureApiKey, stringAt } from './fixtures';
import type { Scenario } from './round-trips';

/**
 * Scenarios for the operator-team routes, the operators listing, and the conversation PATCH that
 * moves a conversation between teams (the teams' open-conversation counts move in its
 * transaction). A creation takes one UpdateItem of the organization's team-creation window (shown
 * as a rate-limit trip) before its transaction. Fixtures (teams to change or delete, operators to
 * add, members to remove, the conversation to move) are made by a fixture API key and the platform
 * token, never by the measured credential.
 */
export async function teamScenarios(
  context: Omit<FixtureContext, 'conversationId' | 'nowMs'>,
): Promise<Scenario[]> {
  const { demo, platform, orgPath, request } = context;
  const apiKey = demo.apiKey;
  const fixtureKey = await fixtureApiKey(context, 'team');
  let sequence = 0;
  const createTeam = async (name: string): Promise<string> =>
    stringAt(
      await request(
        {
          method: 'POST',
          path: '/api/operator-teams',
          token: fixtureKey,
          body: { name: `${name} ${++sequence}`, priority: sequence % 101 },
        },
        201,
        'create a team',
      ),
      'id',
    );
  const createOperator = async (): Promise<string> =>
    stringAt(
      await request(
        {
          method: 'POST',
          path: `${orgPath}/operators`,
          token: platform,
          body: {
            name: 'Bench member',
            email: `member-${crypto.randomUUID()}@example.com`,
            role: 'operator',
          },
        },
        201,
        'create an operator',
      ),
      'id',
    );
  const membership = (teamId: string, operatorId: string) =>
    request(
      {
        method: 'POST',
        path: `/api/operator-teams/${teamId}/members`,
        token: fixtureKey,
        body: { operatorId },
      },
      200,
      'add a member',
    );

  const team = await createTeam('Bench team');
  const other = await createTeam('Bench other team');
  const member = await createOperator();
  await membership(team, demo.adminOperatorId);
  const conversationId = stringAt(
    await request(
      {
        method: 'POST',
        path: '/api/conversations',
        token: fixtureKey,
        body: { visitorId: demo.visitorId, message: 'Which team handles refunds?' },
      },
      201,
      'create a conversation to move between teams',
    ),
    'id',
  );
  await request(
    {
      method: 'PATCH',
      path: `/api/conversations/${conversationId}`,
      token: fixtureKey,
      body: { teamId: team },
    },
    200,
    'assign the conversation to a team',
  );
  let nextPriority = 0;
  let moves = 0;

  return [
    {
      route: 'GET /api/operator-teams',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: '/api/operator-teams?limit=20', token: apiKey }),
    },
    {
      route: 'POST /api/operator-teams',
      // 30 creations a minute per organization (issue 11): its window is counted on every creation.
      target: 'ownLimit',
      caller: 'apiKey',
      expectedStatus: 201,
      call: () => ({
        method: 'POST',
        path: '/api/operator-teams',
        token: apiKey,
        body: { name: `Bench new team ${++sequence}`, description: 'Measured', priority: 10 },
      }),
    },
    {
      route: 'GET /api/operator-teams/{id}',
      caller: 'operator',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: `/api/operator-teams/${team}`, token: demo.adminSession }),
    },
    {
      route: 'PATCH /api/operator-teams/{id}',
      caller: 'apiKey',
      expectedStatus: 200,
      // A real change every time: the priority moves.
      call: () => ({
        method: 'PATCH',
        path: `/api/operator-teams/${other}`,
        token: apiKey,
        body: { priority: ++nextPriority % 101 },
      }),
    },
    {
      route: 'DELETE /api/operator-teams/{id}',
      caller: 'apiKey',
      expectedStatus: 200,
      call: async () => ({
        method: 'DELETE',
        path: `/api/operator-teams/${await createTeam('Bench doomed team')}`,
        token: apiKey,
      }),
    },
    {
      route: 'POST /api/operator-teams/{id}/members',
      caller: 'apiKey',
      expectedStatus: 200,
      call: async () => ({
        method: 'POST',
        path: `/api/operator-teams/${team}/members`,
        token: apiKey,
        body: { operatorId: await createOperator() },
      }),
    },
    {
      route: 'DELETE /api/operator-teams/{id}/members/{operatorId}',
      caller: 'apiKey',
      expectedStatus: 200,
      call: async () => {
        await membership(other, member);
        return { method: 'DELETE', path: `/api/operator-teams/${other}/members/${member}`, token: apiKey };
      },
    },
    {
      route: 'GET /api/operators',
      // The operators' page and their team memberships, read side by side.
      target: 'listing',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: '/api/operators?limit=20', token: apiKey }),
    },
    {
      route: 'PATCH /api/conversations/{id}',
      variant: 'teamId',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'transaction',
      // A real move every time: from one team to the other and back.
      call: () => ({
        method: 'PATCH',
        path: `/api/conversations/${conversationId}`,
        token: apiKey,
        body: { teamId: ++moves % 2 === 1 ? other : team },
      }),
    },
  ];
}
