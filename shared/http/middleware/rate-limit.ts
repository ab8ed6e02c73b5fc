import { RateLimitedError } from '../../errors';
import type { HttpMiddleware } from '../context';
import { RateLimiter } from '../rate-limiter';

const limiter = new RateLimiter();

/**
 * Per credential, right after authentication: every authenticated request counts, including ones
 * later refused for scope or validation, so a misbehaving client is slowed down whatever it sends.
 */
export const rateLimit = (): HttpMiddleware => ({
  before: async (request) => {
    const { state } = request.context;
    const caller = state.caller;
    if (!caller || caller.kind === 'public') return;
    const decision = await limiter.take('orgId' in caller ? caller.orgId : undefined, caller.credentialId);
    const headers = state.responseHeaders;
    headers['RateLimit-Limit'] = String(decision.limit);
    headers['RateLimit-Remaining'] = String(decision.remaining);
    headers['RateLimit-Reset'] = String(decision.resetSeconds);
    if (!decision.allowed) throw new RateLimitedError(decision.resetSeconds);
  },
});
