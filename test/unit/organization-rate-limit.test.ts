import { BatchGetCommand, DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { authCache } from '../../shared/auth/authenticate';
import { clock } from '../../shared/clock';
import { config } from '../../shared/config';
import { OrganizationRateLimiter, organizationChunk } from '../../shared/http/rate-limiter';
import { ok, route } from '../../shared/http/route';
import { createHandler } from '../../shared/http/stack';
import { uuidv7 } from '../../shared/ids';
import { logger } from '../../shared/logger';
import * as z from '../../shared/schemas/zod';
import { apiGatewayEvent, lambdaContext } from './helpers/apigw-event';
import { type ApiKeyFixture, apiKeyFixture, batchGetFrom, organizationItem } from './helpers/auth-items';
import { sharedWindows } from './helpers/rate-windows';

const ddb = mockClient(DynamoDBDocumentClient);
/** Start of a minute, so a test never straddles a window boundary by accident. */
const MINUTE_START = Date.parse('2026-11-21T10:00:00.000Z');

const orgWindowKey = (orgId: string) => `ORG#${orgId}#RATE#ORG_REQUESTS`;

const orgWindowUpdates = (orgId: string) =>
  ddb.commandCalls(UpdateCommand).filter((call) => call.args[0].input.Key?.pk === orgWindowKey(orgId));

beforeEach(() => {
  ddb.reset();
  authCache.clear();
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(MINUTE_START + 15_000);
});

afterEach(() => {
  clock.reset();
  vi.useRealTimers();
});

describe('organizationChunk', () => {
  it('leases 1% of the ceiling, at least one request: a minute takes fewer than 200 lease writes', () => {
    expect(organizationChunk(1)).toBe(1);
    expect(organizationChunk(199)).toBe(1);
    expect(organizationChunk(200)).toBe(2);
    expect(organizationChunk(100_000)).toBe(1000);
    for (const limit of [1, 50, 199, 200, 299, 1200, 99_999, 100_000]) {
      expect(Math.ceil(limit / organizationChunk(limit))).toBeLessThan(200);
    }
  });
});

describe('OrganizationRateLimiter', () => {
  it('leases the organization window in chunks: one UpdateCommand per chunk of requests', async () => {
    // Prepare
    sharedWindows(ddb);
    const limiter = new OrganizationRateLimiter();
    const orgId = uuidv7();

    // Act
    const decisions = [];
    for (let i = 0; i < 25; i++) decisions.push(await limiter.take(orgId, 1000));

    // Assess
    expect(decisions.every((d) => d.allowed)).toBe(true);
    const updates = ddb.commandCalls(UpdateCommand);
    expect(updates).toHaveLength(3);
    expect(updates.map((call) => call.args[0].input.ExpressionAttributeValues?.[':wanted'])).toEqual([
      10, 10, 10,
    ]);
    expect(updates[0]?.args[0].input.Key).toEqual({ pk: orgWindowKey(orgId), sk: `WINDOW#${MINUTE_START}` });
    expect(decisions[0]).toEqual({ allowed: true, limit: 1000, remaining: 999, resetSeconds: 45 });
  });

  it('admits exactly the ceiling across instances sharing the window, then denies', async () => {
    // Prepare: two warm instances (two functions of the same tenant), one shared counter.
    sharedWindows(ddb);
    const a = new OrganizationRateLimiter(() => 3);
    const b = new OrganizationRateLimiter(() => 3);
    const orgId = uuidv7();

    // Act
    const decisions = [];
    for (let i = 0; i < 30; i++) decisions.push(await (i % 2 === 0 ? a : b).take(orgId, 20));

    // Assess
    expect(decisions.filter((d) => d.allowed)).toHaveLength(20);
    for (const denied of decisions.filter((d) => !d.allowed)) {
      expect(denied).toMatchObject({ limit: 20, remaining: 0 });
    }
  });

  it('answers from the lease without DynamoDB (takeNow) until it must refill', async () => {
    // Prepare
    sharedWindows(ddb);
    const limiter = new OrganizationRateLimiter(() => 2);
    const orgId = uuidv7();
    expect(limiter.takeNow(orgId, 10)).toBeUndefined();
    await limiter.take(orgId, 10);

    // Act
    const second = limiter.takeNow(orgId, 10);
    const third = limiter.takeNow(orgId, 10);

    // Assess
    expect(second).toMatchObject({ allowed: true, remaining: 8 });
    expect(third).toBeUndefined();
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(1);
  });

  it('applies a changed ceiling at once: a raised one asks again, a lowered one refuses', async () => {
    // Prepare: the window spent under a ceiling of 2.
    sharedWindows(ddb);
    const limiter = new OrganizationRateLimiter(() => 1);
    const orgId = uuidv7();
    const spent = [];
    for (let i = 0; i < 3; i++) spent.push((await limiter.take(orgId, 2)).allowed);

    // Act
    const raised = [];
    for (let i = 0; i < 4; i++) raised.push(await limiter.take(orgId, 5));
    const lowered = await limiter.take(orgId, 4);

    // Assess
    expect(spent).toEqual([true, true, false]);
    expect(raised.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(raised[0]).toMatchObject({ limit: 5, remaining: 2 });
    expect(lowered).toMatchObject({ allowed: false, limit: 4, remaining: 0 });
  });
});

describe('the rate-limit step with an organization ceiling', () => {
  const handler = createHandler([
    route({
      method: 'GET',
      path: '/api/widgets',
      operationId: 'listWidgets',
      summary: 'List widgets',
      tag: 'Test',
      callers: ['apiKey'],
      response: { status: 200, schema: z.unknown(), description: 'Widgets' },
      handle: async ({ caller }) => ok({ orgId: caller.orgId }),
    }),
  ]);

  beforeEach(() => {
    vi.spyOn(logger, 'info').mockImplementation(() => undefined);
    vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
  });
  afterAll(() => vi.restoreAllMocks());

  /** The keys and their organizations (with the given ceilings) as DynamoDB would hold them. */
  function store(...orgs: { keys: ApiKeyFixture[]; rateLimitPerMinute?: number | null }[]): void {
    const items = orgs.flatMap(({ keys: [first, ...rest], rateLimitPerMinute }) => {
      if (!first) return [];
      const organization = {
        ...organizationItem(first.orgId),
        ...(rateLimitPerMinute === undefined ? {} : { rateLimitPerMinute }),
      };
      return [organization, first.item, ...rest.map((key) => key.item)];
    });
    ddb.on(BatchGetCommand).callsFake(batchGetFrom(items));
  }

  const get = (key: ApiKeyFixture): Promise<APIGatewayProxyResult> =>
    handler(
      apiGatewayEvent({ method: 'GET', resource: '/api/widgets', headers: { 'X-API-Key': key.token } }),
      lambdaContext(),
    );

  const header = (response: APIGatewayProxyResult, name: string) => String(response.headers?.[name]);

  it('counts every credential of the organization together and refuses beyond the ceiling', async () => {
    // Prepare
    sharedWindows(ddb);
    const first = apiKeyFixture();
    const second = apiKeyFixture({ orgId: first.orgId });
    const elsewhere = apiKeyFixture();
    store({ keys: [first, second], rateLimitPerMinute: 3 }, { keys: [elsewhere], rateLimitPerMinute: 3 });

    // Act
    const admitted = [await get(first), await get(second), await get(first)];
    const refused = [await get(second), await get(first)];
    const other = await get(elsewhere);

    // Assess
    expect(admitted.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    expect(admitted.map((r) => header(r, 'RateLimit-Limit'))).toEqual(['3', '3', '3']);
    expect(admitted.map((r) => header(r, 'RateLimit-Remaining'))).toEqual(['2', '1', '0']);
    for (const response of refused) {
      expect(response.statusCode).toBe(429);
      const { error } = JSON.parse(response.body) as {
        error: { code: string; details: Record<string, unknown> };
      };
      expect(error.code).toBe('RATE_LIMITED');
      const retryAfter = header(response, 'Retry-After');
      expect(error.details).toEqual({
        retryAfterSeconds: Number(retryAfter),
        reason: 'organization_rate_limit',
      });
      expect(retryAfter).toBe('45');
      expect(header(response, 'RateLimit-Limit')).toBe('3');
      expect(header(response, 'RateLimit-Remaining')).toBe('0');
      expect(header(response, 'RateLimit-Reset')).toBe(retryAfter);
    }
    expect(other.statusCode).toBe(200);
  });

  it('reports the credential’s limit while it is the tighter one', async () => {
    // Prepare
    sharedWindows(ddb);
    const key = apiKeyFixture();
    store({ keys: [key], rateLimitPerMinute: 100_000 });

    // Act
    const response = await get(key);

    // Assess
    expect(response.statusCode).toBe(200);
    expect(header(response, 'RateLimit-Limit')).toBe(String(config.rateLimitPerMinute));
    expect(header(response, 'RateLimit-Remaining')).toBe(String(config.rateLimitPerMinute - 1));
  });

  it('reads nothing more than authentication does: the ceiling comes with the organization', async () => {
    // Prepare
    sharedWindows(ddb);
    const key = apiKeyFixture();
    store({ keys: [key], rateLimitPerMinute: 50 });

    // Act
    await get(key);
    await get(key);

    // Assess
    expect(ddb.commandCalls(BatchGetCommand)).toHaveLength(1);
    expect(ddb.commandCalls(GetCommand)).toHaveLength(0);
    expect(orgWindowUpdates(key.orgId)).toHaveLength(2);
  });

  it('without a ceiling (null, or an organization stored before the field) leases no organization window', async () => {
    // Prepare
    sharedWindows(ddb);
    const none = apiKeyFixture();
    const older = apiKeyFixture();
    store({ keys: [none], rateLimitPerMinute: null }, { keys: [older] });

    // Act
    const responses = [await get(none), await get(older)];

    // Assess
    expect(responses.map((r) => r.statusCode)).toEqual([200, 200]);
    expect(orgWindowUpdates(none.orgId)).toHaveLength(0);
    expect(orgWindowUpdates(older.orgId)).toHaveLength(0);
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(2);
  });

  it('does not count toward the organization a request its credential refused', async () => {
    // Prepare: the credential's window is spent already.
    const used = sharedWindows(ddb);
    const key = apiKeyFixture();
    store({ keys: [key], rateLimitPerMinute: 10 });
    used.set(`ORG#${key.orgId}#RATE#${key.credentialId}|WINDOW#${MINUTE_START}`, config.rateLimitPerMinute);

    // Act
    const response = await get(key);

    // Assess
    expect(response.statusCode).toBe(429);
    expect(JSON.parse(response.body).error.details.reason).toBeUndefined();
    expect(header(response, 'RateLimit-Limit')).toBe(String(config.rateLimitPerMinute));
    expect(orgWindowUpdates(key.orgId)).toHaveLength(0);
  });
});
