import { operators } from '../../shared/db/operators';
import { teams } from '../../shared/db/teams';
import { ok, route } from '../../shared/http/route';
import { pageOf } from '../../shared/schemas/common';
import { examplePage, operatorWithTeamsExample } from '../../shared/schemas/examples';
import { listOperatorsQuery, operatorPage } from '../../shared/schemas/team';

export const listOperators = route({
  method: 'GET',
  path: '/api/operators',
  operationId: 'listOperators',
  summary: 'List operators',
  description:
    'The organization’s operators, oldest first, each with the `teamIds` of the teams it belongs to; `role` narrows to `admin` or `operator`. These `id`s are what an API key names as `operatorId` (sending a message, assigning a conversation, adding a team member) and in `mentions`. Offset pagination (`offset` default 0, `limit` default 20, at most 100).',
  tag: 'Operators',
  scope: 'operator-teams:read',
  callers: ['apiKey', 'operator'],
  query: listOperatorsQuery,
  response: { status: 200, schema: operatorPage, description: 'A page of operators' },
  examples: { response: examplePage(operatorWithTeamsExample) },
  handle: async ({ caller, query }) => {
    // Both reads in one round trip: membership lives on the teams, so it cannot drift.
    const [all, allTeams] = await Promise.all([operators.all(caller.orgId), teams.all(caller.orgId)]);
    const teamIds = new Map<string, string[]>();
    for (const team of allTeams) {
      for (const member of team.memberIds) teamIds.set(member, [...(teamIds.get(member) ?? []), team.id]);
    }
    const listed = all
      .filter((operator) => query.role === undefined || operator.role === query.role)
      .map((operator) => ({ ...operator, teamIds: teamIds.get(operator.id) ?? [] }));
    return ok(pageOf(listed, query.offset, query.limit));
  },
});
