import { clock } from '../../shared/clock';
import { teams } from '../../shared/db/teams';
import { ConflictError, NotFoundError, RateLimitedError } from '../../shared/errors';
import { rateLimitHeaders } from '../../shared/http/errors';
import { created, ok, route } from '../../shared/http/route';
import { uuidv7 } from '../../shared/ids';
import { pageOf, successResult } from '../../shared/schemas/common';
import { createTeamExample, examplePage, newTeamExample, teamExample } from '../../shared/schemas/examples';
import {
  createTeamBody,
  listTeamsQuery,
  type OperatorTeam,
  operatorTeam,
  operatorTeamPage,
  teamParams,
  updateTeamBody,
} from '../../shared/schemas/team';

const TAG = 'Operator teams';

/** Routing order: the highest priority first, then the oldest team. */
const routingOrder = (a: OperatorTeam, b: OperatorTeam) =>
  b.priority - a.priority || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export const listTeams = route({
  method: 'GET',
  path: '/api/operator-teams',
  operationId: 'listOperatorTeams',
  summary: 'List operator teams',
  description:
    'The organization’s teams with their `memberIds`, in routing order: highest `priority` first, then oldest first. Offset pagination (`offset` default 0, `limit` default 20, at most 100).',
  tag: TAG,
  scope: 'operator-teams:read',
  callers: ['apiKey', 'operator'],
  query: listTeamsQuery,
  response: { status: 200, schema: operatorTeamPage, description: 'A page of teams' },
  examples: { response: examplePage(teamExample) },
  handle: async ({ caller, query }) => {
    const all = (await teams.all(caller.orgId)).sort(routingOrder);
    return ok(pageOf(all, query.offset, query.limit));
  },
});

export const getTeam = route({
  method: 'GET',
  path: '/api/operator-teams/{id}',
  operationId: 'getOperatorTeam',
  summary: 'Get an operator team',
  description: 'One team with its `memberIds`. An id of another organization is 404.',
  tag: TAG,
  scope: 'operator-teams:read',
  callers: ['apiKey', 'operator'],
  params: teamParams,
  response: { status: 200, schema: operatorTeam, description: 'The team' },
  errors: [404],
  examples: { response: teamExample },
  handle: async ({ caller, params }) => {
    const team = await teams.get(caller.orgId, params.id);
    if (!team) throw new NotFoundError('Team not found');
    return ok(team);
  },
});

export const createTeam = route({
  method: 'POST',
  path: '/api/operator-teams',
  operationId: 'createOperatorTeam',
  summary: 'Create an operator team',
  description: [
    '`name` (1–200 characters, plain text; names need not be unique), `description` (at most 2000, or null; default null), `priority` (an integer 0–100, default 0: higher routes first). The team starts with no members: add them with `POST /api/operator-teams/{id}/members`.',
    'Rate limit: at most 30 teams a minute per organization, whichever credential creates them (a fixed one-minute window). The 31st is 429 `RATE_LIMITED` with `Retry-After`; this answer and the 429 report that limit in `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (or the credential’s own limit when it is closer to running out). Refused requests (403, 422) do not count.',
  ].join('\n\n'),
  tag: TAG,
  scope: 'operator-teams:write',
  adminOnly: true,
  callers: ['apiKey', 'operator'],
  body: createTeamBody,
  response: { status: 201, schema: operatorTeam, description: 'The new team' },
  examples: { request: createTeamExample, response: newTeamExample },
  handle: async ({ caller, body }) => {
    const quota = await teams.reserveCreation(caller.orgId);
    if (!quota.allowed) {
      throw new RateLimitedError(quota.resetSeconds, {
        quota,
        message: `At most ${quota.limit} teams can be created a minute in one organization`,
      });
    }
    const now = clock.nowIso();
    const team = await teams.create({
      id: uuidv7(),
      orgId: caller.orgId,
      name: body.name,
      description: body.description ?? null,
      priority: body.priority ?? 0,
      memberIds: [],
      createdAt: now,
      updatedAt: now,
    });
    return created(team, rateLimitHeaders(quota));
  },
});

export const updateTeam = route({
  method: 'PATCH',
  path: '/api/operator-teams/{id}',
  operationId: 'updateOperatorTeam',
  summary: 'Update an operator team',
  description:
    'Writes only the fields present: `name`, `description` (null clears it), `priority` (0–100). Members change through the member endpoints. A body that changes nothing writes nothing and keeps `updatedAt`.',
  tag: TAG,
  scope: 'operator-teams:write',
  adminOnly: true,
  callers: ['apiKey', 'operator'],
  params: teamParams,
  body: updateTeamBody,
  response: { status: 200, schema: operatorTeam, description: 'The team after the change' },
  errors: [404],
  examples: { request: { priority: teamExample.priority }, response: teamExample },
  handle: async ({ caller, params, body }) => {
    const team = await teams.update(caller.orgId, params.id, body);
    if (!team) throw new NotFoundError('Team not found');
    return ok(team);
  },
});

export const deleteTeam = route({
  method: 'DELETE',
  path: '/api/operator-teams/{id}',
  operationId: 'deleteOperatorTeam',
  summary: 'Delete an operator team',
  description:
    'Refused with 409 `CONFLICT` (`details.reason = "team_has_open_conversations"`, `details.openConversations`) while conversations that are not closed (`open`, `pending`, `snoozed`) are assigned to the team: close them or move them to another team first. The check is exact, also against an assignment made at the same moment. Closed conversations keep the deleted team’s id in `teamId` (their history), also when reopened; a PATCH may move them to another team or to none. The team’s id is never valid again as a new `teamId` (422).',
  tag: TAG,
  scope: 'operator-teams:write',
  adminOnly: true,
  callers: ['apiKey', 'operator'],
  params: teamParams,
  response: { status: 200, schema: successResult, description: 'Deleted' },
  errors: [404, 409],
  examples: { response: { success: true } },
  handle: async ({ caller, params }) => {
    const result = await teams.remove(caller.orgId, params.id);
    if (result === 'not_found') throw new NotFoundError('Team not found');
    if (result !== 'deleted') {
      throw new ConflictError('Conversations that are not closed are assigned to this team', {
        reason: 'team_has_open_conversations',
        openConversations: result.openConversations,
      });
    }
    return ok({ success: true });
  },
});
