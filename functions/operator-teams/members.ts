import { teams } from '../../shared/db/teams';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors';
import { ok, route } from '../../shared/http/route';
import { successResult } from '../../shared/schemas/common';
import { ids } from '../../shared/schemas/examples';
import { addMemberBody, memberParams, teamParams } from '../../shared/schemas/team';

const TAG = 'Operator teams';

export const addTeamMember = route({
  method: 'POST',
  path: '/api/operator-teams/{id}/members',
  operationId: 'addOperatorTeamMember',
  summary: 'Add a member to an operator team',
  description:
    '`operatorId` must be an operator of the organization (422 naming `operatorId` otherwise; `GET /api/operators` lists them). An operator already in the team is 409 `CONFLICT` (`details.reason = "already_member"`), also when two requests add the same operator at once: exactly one of them succeeds. An operator may be in several teams.',
  tag: TAG,
  scope: 'operator-teams:write',
  adminOnly: true,
  callers: ['apiKey', 'operator'],
  params: teamParams,
  body: addMemberBody,
  response: { status: 200, schema: successResult, description: 'Added' },
  errors: [404, 409],
  examples: { request: { operatorId: ids.operator }, response: { success: true } },
  handle: async ({ caller, params, body }) => {
    const result = await teams.addMember(caller.orgId, params.id, body.operatorId);
    if (result === 'team_not_found') throw new NotFoundError('Team not found');
    if (result === 'already_member')
      throw new ConflictError('The operator is already a member of this team', { reason: 'already_member' });
    if (result === 'operator_not_found')
      throw ValidationError.field('operatorId', 'No such operator in this organization');
    return ok({ success: true });
  },
});

export const removeTeamMember = route({
  method: 'DELETE',
  path: '/api/operator-teams/{id}/members/{operatorId}',
  operationId: 'removeOperatorTeamMember',
  summary: 'Remove a member from an operator team',
  description:
    '404 when the team does not exist in the organization or the operator is not one of its members (so a repeat after success is 404). Conversations assigned to the operator or the team are not changed.',
  tag: TAG,
  scope: 'operator-teams:write',
  adminOnly: true,
  callers: ['apiKey', 'operator'],
  params: memberParams,
  response: { status: 200, schema: successResult, description: 'Removed' },
  errors: [404],
  examples: { response: { success: true } },
  handle: async ({ caller, params }) => {
    if (!(await teams.removeMember(caller.orgId, params.id, params.operatorId)))
      throw new NotFoundError('The operator is not a member of this team');
    return ok({ success: true });
  },
});
