import { authenticate as resolveCaller } from '../../auth/authenticate';
import { auditActorOf, orgAudit } from '../../db/org-audit';
import { logger } from '../../logger';
import type { HttpMiddleware } from '../context';

/**
 * Resolves the caller (401 when missing or invalid) and the organization it belongs to. A request
 * made with an impersonation session is audited here (the operator as the actor, `impersonatedBy`
 * the platform), before
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
        ...auditActorOf(caller),
        type: 'impersonation.request',
        target: { type: 'route', id: `${route.method} ${route.path}` },
        details: {
          impersonatedOperatorId: caller.operatorId,
          sessionId: caller.credentialId,
          path: request.event.path,
          requestId: state.requestId,
        },
      });
    }
  },
});
