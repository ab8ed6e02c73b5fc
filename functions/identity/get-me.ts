import { callerTypeNames } from '../../shared/auth/caller';
import { roleScopes } from '../../shared/auth/scopes';
import { ok, route } from '../../shared/http/route';
import { ids } from '../../shared/schemas/examples';
import { lazily } from '../../shared/schemas/names';
import * as z from '../../shared/schemas/zod';

const me = lazily(() =>
  z.object({
    organizationId: z.uuid(),
    callerType: z.enum(['api_key', 'operator', 'visitor']),
    /** The key's scopes (empty for an unrestricted key) or the scopes a session's role grants. */
    scopes: z.array(z.string()),
    modules: z.array(z.string()),
  }),
);

export const getMe = route({
  method: 'GET',
  path: '/api/me',
  operationId: 'getMe',
  summary: 'Describe the calling credential',
  description: 'Any valid organization credential; no scope needed. Visitors have no scopes.',
  tag: 'Identity',
  callers: ['apiKey', 'operator', 'visitor'],
  response: { status: 200, schema: me, description: 'The caller' },
  examples: {
    response: {
      organizationId: ids.organization,
      callerType: 'api_key',
      scopes: [],
      modules: ['automation_api'],
    },
  },
  handle: async ({ caller, organization }) => {
    const scopes =
      caller.kind === 'apiKey' ? caller.scopes : caller.kind === 'operator' ? roleScopes[caller.role] : [];
    return ok({
      organizationId: caller.orgId,
      callerType: callerTypeNames[caller.kind],
      scopes: [...scopes],
      modules: organization.modules,
    });
  },
});
