import { beforeAll, describe, expect, it } from 'vitest';
import { clock } from '../../shared/clock';
import {
  type ApiResponse,
  call,
  createApiKey,
  createTenant,
  platformToken,
  type Tenant,
} from '../helpers/api';
import { useInProcessStack } from '../helpers/in-process-stack';

/**
 * The organization's request ceiling (`rateLimitPerMinute`), as the platform admin sets it and as an
 * integrator of the organization meets it: every credential of the organization together, on top of
 * each credential's own limit. In-process, so the clock can be moved to a fresh one-minute window
 * and past the auth cache's lifetime (10 s).
 */
const stack = useInProcessStack();

type Organization = { id: string; rateLimitPerMinute: number | null };
type ErrorBody = { error: { code: string; details?: { field?: string; reason?: string } } };

const errorOf = (response: ApiResponse<unknown>) => (response.body as ErrorBody).error;

/** Moves the service's clock to the start of the next minute: a fresh rate-limit window. */
function freshWindow(): void {
  const now = clock.nowMs();
  stack.advance(60_000 - (now % 60_000) + 50);
}

/** Past the auth cache's lifetime: every instance reads the organization again. */
const pastAuthCache = () => stack.advance(11_000);

const patchOrganization = (orgId: string, body: unknown) =>
  call<Organization>('PATCH', `/api/admin/organizations/${orgId}`, { token: platformToken(), body });

async function setCeiling(orgId: string, rateLimitPerMinute: number | null): Promise<void> {
  const patched = await patchOrganization(orgId, { rateLimitPerMinute });
  if (patched.status !== 200) throw new Error(`set ceiling: ${patched.status} ${patched.text}`);
}

const me = (token: string) => call('GET', '/api/me', { token });

/** `count` requests at once, spread over the given credentials in turn. */
const burst = (tokens: readonly string[], count: number) =>
  Promise.all(Array.from({ length: count }, (_, i) => me(tokens[i % tokens.length] as string)));

function expectOrganizationRefusal(response: ApiResponse<unknown>, ceiling: number): void {
  expect(response.status, response.text).toBe(429);
  expect(errorOf(response).code).toBe('RATE_LIMITED');
  expect(errorOf(response).details?.reason).toBe('organization_rate_limit');
  const retryAfter = Number(response.headers.get('Retry-After'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(response.headers.get('RateLimit-Limit')).toBe(String(ceiling));
  expect(response.headers.get('RateLimit-Remaining')).toBe('0');
  expect(response.headers.get('RateLimit-Reset')).toBe(String(retryAfter));
}

describe('the organization record', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await createTenant();
  });

  it('has no ceiling by default, shows the one set, and null removes it', async () => {
    const path = `/api/admin/organizations/${tenant.orgId}`;
    const read = () => call<Organization>('GET', path, { token: platformToken() });
    expect((await read()).body.rateLimitPerMinute).toBeNull();

    for (const value of [1, 100_000, 250, null]) {
      const patched = await patchOrganization(tenant.orgId, { rateLimitPerMinute: value });
      expect(patched.status, patched.text).toBe(200);
      expect(patched.body.rateLimitPerMinute).toBe(value);
      expect((await read()).body.rateLimitPerMinute).toBe(value);
    }

    // Other changes leave it as it is.
    await setCeiling(tenant.orgId, 500);
    const renamed = await patchOrganization(tenant.orgId, { name: 'Renamed' });
    expect(renamed.body.rateLimitPerMinute).toBe(500);
  });

  it('refuses anything but an integer 1–100,000 or null, naming the field', async () => {
    await setCeiling(tenant.orgId, 42);
    for (const value of [0, -1, 100_001, 1.5, 'x', '100', true, {}]) {
      const refused = await patchOrganization(tenant.orgId, { rateLimitPerMinute: value });
      expect(refused.status, JSON.stringify(value)).toBe(422);
      expect(errorOf(refused).code).toBe('VALIDATION_ERROR');
      expect(errorOf(refused).details?.field).toBe('rateLimitPerMinute');
    }
    const read = await call<Organization>('GET', `/api/admin/organizations/${tenant.orgId}`, {
      token: platformToken(),
    });
    expect(read.body.rateLimitPerMinute).toBe(42);
  });
});

describe('the ceiling', () => {
  const CEILING = 8;

  it('admits exactly the ceiling in a minute, all the organization’s keys together, then 429', async () => {
    const tenant = await createTenant();
    const second = await createApiKey(tenant.orgId, []);
    const other = await createTenant();
    const otherKey = await createApiKey(other.orgId, []);
    await setCeiling(tenant.orgId, CEILING);
    await setCeiling(other.orgId, CEILING);
    freshWindow();

    const first = await burst([tenant.apiKey, second.key], CEILING + 6);
    const admitted = first.filter((response) => response.status === 200);
    expect(admitted).toHaveLength(CEILING);
    // Each answer reports the organization's ceiling: it is closer to running out than the key's.
    for (const response of admitted) expect(response.headers.get('RateLimit-Limit')).toBe(String(CEILING));
    const remaining = admitted.map((response) => Number(response.headers.get('RateLimit-Remaining')));
    expect(Math.min(...remaining)).toBe(0);
    expect(Math.max(...remaining)).toBe(CEILING - 1);
    for (const response of first.filter((each) => each.status !== 200))
      expectOrganizationRefusal(response, CEILING);

    // Whichever credential asks, and whichever function answers: the window is the organization's.
    expectOrganizationRefusal(await me(tenant.apiKey), CEILING);
    expectOrganizationRefusal(await me(second.key), CEILING);
    expectOrganizationRefusal(await me(tenant.adminSession), CEILING);
    expectOrganizationRefusal(await call('GET', '/api/conversations', { token: tenant.apiKey }), CEILING);

    // Another organization, even with the same ceiling, has its own window.
    const elsewhere = await burst([other.apiKey, otherKey.key], CEILING);
    expect(elsewhere.map((response) => response.status)).toEqual(Array(CEILING).fill(200));

    // The next minute admits the organization again.
    freshWindow();
    const next = await me(second.key);
    expect(next.status).toBe(200);
    expect(next.headers.get('RateLimit-Remaining')).toBe(String(CEILING - 1));
  });

  it('null removes the ceiling: the keys are back to their own limit within the auth cache lifetime', async () => {
    const tenant = await createTenant();
    const second = await createApiKey(tenant.orgId, []);
    await setCeiling(tenant.orgId, 3);
    freshWindow();
    const spent = await burst([tenant.apiKey, second.key], 5);
    expect(spent.filter((response) => response.status === 200)).toHaveLength(3);

    await setCeiling(tenant.orgId, null);
    pastAuthCache();
    // Still the same minute, the organization's window spent: no longer consulted.
    const freed = await burst([tenant.apiKey, second.key], 10);
    expect(freed.map((response) => response.status)).toEqual(Array(10).fill(200));
    const perKey = Number(freed[0]?.headers.get('RateLimit-Limit'));
    expect(perKey).toBeGreaterThan(3);
  });

  it('applies a ceiling set on an organization whose keys are already in use', async () => {
    const tenant = await createTenant();
    freshWindow();
    expect((await me(tenant.apiKey)).status).toBe(200);

    await setCeiling(tenant.orgId, 2);
    pastAuthCache();
    const limited = await burst([tenant.apiKey, tenant.operatorSession], 4);
    expect(limited.filter((response) => response.status === 200)).toHaveLength(2);
    for (const response of limited.filter((each) => each.status !== 200))
      expectOrganizationRefusal(response, 2);
  });
});
