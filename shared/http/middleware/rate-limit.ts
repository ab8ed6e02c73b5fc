import { RateLimitedError } from '../../errors';
import type { HttpMiddleware, HttpRequest } from '../context';
import { OrganizationRateLimiter, type RateDecision, RateLimiter } from '../rate-limiter';

const credentialLimiter = new RateLimiter();
const organizationLimiter = new OrganizationRateLimiter();

/**
 * The decision the client is told about: a refusal, else the limit closer to running out (fewer
 * requests remaining; the lower limit on a tie). Both windows are the same minute, so the same reset.
 */
function tighter(own: RateDecision, organization: RateDecision): RateDecision {
  if (!organization.allowed) return organization;
  if (organization.remaining !== own.remaining)
    return organization.remaining < own.remaining ? organization : own;
  return organization.limit < own.limit ? organization : own;
}

function apply(request: HttpRequest, own: RateDecision, organization?: RateDecision): void {
  const decision = organization ? tighter(own, organization) : own;
  const headers = request.context.state.responseHeaders;
  headers['RateLimit-Limit'] = String(decision.limit);
  headers['RateLimit-Remaining'] = String(decision.remaining);
  headers['RateLimit-Reset'] = String(decision.resetSeconds);
  if (!own.allowed) throw new RateLimitedError(own.resetSeconds);
  if (organization && !organization.allowed) {
    throw new RateLimitedError(organization.resetSeconds, {
      message: `This organization is limited to ${organization.limit} requests a minute, all its credentials together`,
      details: { reason: 'organization_rate_limit' },
    });
  }
}

/**
 * After the credential's window, the organization's ceiling when it has one (`rateLimitPerMinute`),
 * over the requests its credentials admitted. The organization comes with the caller from
 * authentication (read with the credential, cached with it), so this needs no read; its window is
 * leased in chunks as the credential's is (shared/http/rate-limiter.ts). A request the organization
 * refuses still counts for its credential, as every authenticated request does.
 */
function withOrganization(request: HttpRequest, own: RateDecision): void | Promise<void> {
  const organization = request.context.state.organization;
  const ceiling = organization?.rateLimitPerMinute;
  if (!own.allowed || !organization || ceiling === null || ceiling === undefined) return apply(request, own);
  const now = organizationLimiter.takeNow(organization.id, ceiling);
  if (now) return apply(request, own, now);
  return organizationLimiter.take(organization.id, ceiling).then((decision) => apply(request, own, decision));
}

/**
 * Per credential, right after authentication: every authenticated request counts, including ones
 * later refused for scope or validation, so a misbehaving client is slowed down whatever it sends.
 * Synchronous while this instance's leases have quota (almost always); waits only for a refill.
 */
export const rateLimit = (): HttpMiddleware => ({
  before: (request) => {
    const caller = request.context.state.caller;
    if (!caller || caller.kind === 'public') return;
    const now = credentialLimiter.takeNow(caller.credentialId);
    if (now) return withOrganization(request, now);
    return credentialLimiter
      .take('orgId' in caller ? caller.orgId : undefined, caller.credentialId)
      .then((decision) => withOrganization(request, decision));
  },
});
