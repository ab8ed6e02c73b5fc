import { authenticate as resolveCaller } from '../../auth/authenticate';
import { orgAudit } from '../../db/org-audit';
import { logger } from '../../logger';
import type { HttpMiddleware } from '../context';

/**
 * Resolves the caller (401 when missing or invalid) and the organization it belongs to. A request
 * made with an impersonation session is audited here, with the platform as the actor, before
 * anything else happens: no impersonated action (a refused one included) goes unrecorded.
 */
export const authenticate = (): HttpMiddleware => ({
  before: async (request) => {
    const { state } = request.context;
    const route = state.route;
    if (!route) return;
    const { caller, organization } = await resolveCaller(state.headers, route.callers);
    state.caller = caller;
    if (organization) {
      state.organization = organization;
      logger.appendKeys({ orgId: organization.id });
    }
    if (caller.kind === 'operator' && caller.impersonatedBy) {
      await orgAudit.record(caller.orgId, {
        action: 'impersonation.request',
        actor: { type: 'platform', id: caller.impersonatedBy },
        impersonatedOperatorId: caller.operatorId,
        sessionId: caller.credentialId,
        route: `${route.method} ${route.path}`,
        path: request.event.path,
        requestId: state.requestId,
      });
    }
  },
});
