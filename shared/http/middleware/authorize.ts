import type { Caller } from '../../auth/caller';
import { ForbiddenError, ModuleRequiredError } from '../../errors';
import type { HttpMiddleware } from '../context';
import type { AnyRoute } from '../route';

const API_MODULE = 'automation_api';

export function checkAccess(route: AnyRoute, caller: Caller, modules: readonly string[] | undefined): void {
  if (!route.callers.includes(caller.kind)) {
    throw new ForbiddenError(
      caller.kind === 'platform'
        ? 'A platform admin token cannot call organization endpoints'
        : `This endpoint does not accept ${caller.kind} credentials`,
    );
  }
  if (caller.kind === 'apiKey') {
    if (!modules?.includes(API_MODULE)) throw new ModuleRequiredError(API_MODULE, 'public_api');
    if (route.scope && caller.scopes.length > 0 && !caller.scopes.includes(route.scope)) {
      throw new ForbiddenError(`This API key lacks the ${route.scope} scope`, { requiredScope: route.scope });
    }
  }
  if (caller.kind === 'operator' && route.adminOnly && caller.role !== 'admin') {
    throw new ForbiddenError('This endpoint needs an administrator session', { requiredRole: 'admin' });
  }
}

/**
 * Caller kind (403), then for API keys the `automation_api` module (402) and the scope (403), then
 * the admin role for admin-only endpoints (403). Visitors reach only routes that list them; which
 * conversations they see is decided by the data layer (their own only).
 */
export const authorize = (): HttpMiddleware => ({
  before: (request) => {
    const { route, caller, organization } = request.context.state;
    if (!route || !caller) return;
    checkAccess(route, caller, organization?.modules);
  },
});
