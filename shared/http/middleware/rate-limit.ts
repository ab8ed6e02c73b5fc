import { RateLimitedError } from '../../errors';
import type { HttpMiddleware, HttpRequest } from '../context';
import { type RateDecision, RateLimiter } from '../rate-limiter';

const limiter = new RateLimiter();

function apply(request: HttpRequest, decision: RateDecision): void {
  const headers = request.context.state.responseHeaders;
  headers['RateLimit-Limit'] = String(decision.limit);
  headers['RateLimit-Remaining'] = String(decision.remaining);
  headers['RateLimit-Reset'] = String(decision.resetSeconds);
  if (!decision.allowed) throw new RateLimitedError(decision.resetSeconds);
}

/**
 * Per credential, right after authentication: every authenticated request counts, including ones
 * later refused for scope or validation, so a misbehaving client is slowed down whatever it sends.
 * Synchronous while this instance's lease has quota (almost always); waits only for a refill.
 */
export const rateLimit = (): HttpMiddleware => ({
  before: (request) => {
    const caller = request.context.state.caller;
    if (!caller || caller.kind === 'public') return;
    const now = limiter.takeNow(caller.credentialId);
    if (now) return apply(request, now);
    return limiter
      .take('orgId' in caller ? caller.orgId : undefined, caller.credentialId)
      .then((decision) => apply(request, decision));
  },
});
