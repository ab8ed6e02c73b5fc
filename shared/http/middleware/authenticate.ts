import { authenticate as resolveCaller } from '../../auth/authenticate';
import { log } from '../../logger';
import type { HttpMiddleware } from '../context';

/** Resolves the caller (401 when missing or invalid) and the organization it belongs to. */
export const authenticate = (): HttpMiddleware => ({
  before: async (request) => {
    const { state } = request.context;
    const route = state.route;
    if (!route) return;
    const { caller, organization } = await resolveCaller(state.headers, route.callers);
    state.caller = caller;
    if (organization) {
      state.organization = organization;
      log.setOrganization(organization.id);
    }
  },
});
