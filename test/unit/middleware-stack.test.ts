import { ConditionalCheckFailedException, ThrottlingException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  GetCommand,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import fc from 'fast-check';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { authCache } from '../../shared/auth/authenticate';
import { mintOrgToken } from '../../shared/auth/tokens';
import { config } from '../../shared/config';
import { organizations } from '../../shared/db/organizations';
import { created, ok, route } from '../../shared/http/route';
import { createHandler } from '../../shared/http/stack';
import { logger } from '../../shared/logger';
import * as z from '../../shared/schemas/zod';
import { apiGatewayEvent, type EventOptions, lambdaContext } from './helpers/apigw-event';
import { type ApiKeyFixture, apiKeyFixture, batchGetFrom, organizationItem } from './helpers/auth-items';

const SECRET_IN_ERROR = 'arn:aws:dynamodb:eu-west-1:123456789012:table/secret-table password=hunter2';

const widgetBody = z.strictObject({
  name: z.string().check(z.minLength(1), z.maxLength(100)),
  tags: z.optional(z.array(z.string())),
});
const widgetQuery = z.strictObject({
  limit: z.optional(z.string().check(z.regex(/^(100|[1-9][0-9]?)$/, 'Expected 1 to 100'))),
});
const anything = z.unknown();

const routes = [
  route({
    method: 'GET',
    path: '/api/widgets',
    operationId: 'listWidgets',
    summary: 'List widgets',
    tag: 'Test',
    scope: 'conversations:read',
    callers: ['apiKey'],
    query: widgetQuery,
    response: { status: 200, schema: anything, description: 'Widgets' },
    handle: async ({ caller, organization, query }) =>
      ok({ orgId: caller.orgId, modules: organization.modules, limit: query.limit ?? null }),
  }),
  route({
    method: 'POST',
    path: '/api/widgets',
    operationId: 'createWidget',
    summary: 'Create a widget',
    tag: 'Test',
    scope: 'conversations:read',
    callers: ['apiKey'],
    body: widgetBody,
    response: { status: 201, schema: anything, description: 'The widget' },
    handle: async ({ body }) => created({ name: body.name, tags: body.tags ?? [] }),
  }),
  route({
    method: 'GET',
    path: '/api/widgets/boom',
    operationId: 'boom',
    summary: 'Fails',
    tag: 'Test',
    scope: 'conversations:read',
    callers: ['apiKey'],
    response: { status: 200, schema: anything, description: 'Never' },
    handle: async () => {
      throw new Error(`Cannot reach ${SECRET_IN_ERROR}`);
    },
  }),
  route({
    method: 'GET',
    path: '/api/widgets/organization',
    operationId: 'readOrganization',
    summary: 'Reads the organization from DynamoDB',
    tag: 'Test',
    scope: 'conversations:read',
    callers: ['apiKey'],
    response: { status: 200, schema: anything, description: 'The organization' },
    handle: async ({ caller }) => ok(await organizations.get(caller.orgId)),
  }),
];

const handler = createHandler(routes);
const ddb = mockClient(DynamoDBDocumentClient);

interface Envelope {
  error: {
    code: string;
    message: string;
    details?: Record<string, unknown>;
    fields?: Record<string, string>;
    correlationId: string;
  };
}

const securityHeaders = {
  'Strict-Transport-Security': 'max-age=63072000; includeSubDomains; preload',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Cache-Control': 'no-store',
};

/** The organization table as DynamoDB would hold it for the given keys. */
function storeKeys(...fixtures: { key: ApiKeyFixture; modules?: string[] }[]): void {
  const items = fixtures.flatMap(({ key, modules }) => [key.item, organizationItem(key.orgId, modules)]);
  ddb.on(BatchGetCommand).callsFake(batchGetFrom(items));
}

function invoke(options: EventOptions): Promise<APIGatewayProxyResult> {
  return handler(apiGatewayEvent(options), lambdaContext());
}

const bearer = (key: ApiKeyFixture) => ({ Authorization: `Bearer ${key.token}` });
const jsonHeaders = (key: ApiKeyFixture) => ({ ...bearer(key), 'Content-Type': 'application/json' });

function header(response: APIGatewayProxyResult, name: string): string | undefined {
  const value = response.headers?.[name];
  return value === undefined ? undefined : String(value);
}

/** Every error: the envelope, its code, and the same id in the body and in X-Request-Id. */
function expectError(response: APIGatewayProxyResult, status: number, code: string): Envelope['error'] {
  const { error } = JSON.parse(response.body) as Envelope;
  expect({ status: response.statusCode, code: error.code }).toEqual({ status, code });
  expect(typeof error.message).toBe('string');
  expect(error.correlationId).toBeTruthy();
  expect(header(response, 'X-Request-Id')).toBe(error.correlationId);
  expect(response.headers).toMatchObject(securityHeaders);
  expect(header(response, 'Content-Type')).toMatch(/^application\/json/);
  return error;
}

const dynamoCalls = () => ddb.calls().length;

describe('middleware stack', () => {
  beforeEach(() => {
    ddb.reset();
    ddb.on(UpdateCommand).resolves({ Attributes: { used: 1 } });
    authCache.clear();
    vi.spyOn(logger, 'info').mockImplementation(() => undefined);
    vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    vi.spyOn(logger, 'error').mockImplementation(() => undefined);
  });

  afterAll(() => {
    vi.restoreAllMocks();
  });

  describe('a valid request', () => {
    it('reaches the handler with the caller and organization of the credential', async () => {
      // Prepare
      const key = apiKeyFixture();
      storeKeys({ key });
      // A fresh window: the counter ends at what this lease asked for.
      ddb.on(UpdateCommand).callsFake((input: UpdateCommandInput) => ({
        Attributes: { used: input.ExpressionAttributeValues?.[':wanted'] },
      }));

      // Act
      const response = await invoke({
        method: 'GET',
        resource: '/api/widgets',
        headers: bearer(key),
        query: { limit: '5' },
      });

      // Assess
      expect(response.statusCode).toBe(200);
      expect(JSON.parse(response.body)).toEqual({
        orgId: key.orgId,
        modules: ['automation_api'],
        limit: '5',
      });
      expect(response.headers).toMatchObject(securityHeaders);
      expect(header(response, 'X-Request-Id')).toBeTruthy();
      expect(header(response, 'RateLimit-Limit')).toBe(String(config.rateLimitPerMinute));
      expect(header(response, 'RateLimit-Remaining')).toBe(String(config.rateLimitPerMinute - 1));
      expect(Number(header(response, 'RateLimit-Reset'))).toBeGreaterThan(0);
    });

    it('reads the credential and its organization in one BatchGet by their keys', async () => {
      // Prepare
      const key = apiKeyFixture();
      storeKeys({ key });

      // Act
      await invoke({ method: 'GET', resource: '/api/widgets', headers: bearer(key) });

      // Assess
      const batches = ddb.commandCalls(BatchGetCommand);
      expect(batches).toHaveLength(1);
      const requested = Object.values(batches[0]?.args[0].input.RequestItems ?? {}).flatMap(
        (r) => r.Keys ?? [],
      );
      expect(requested).toEqual([
        { pk: `ORG#${key.orgId}`, sk: `APIKEY#${key.credentialId}` },
        { pk: `ORG#${key.orgId}`, sk: 'ORGANIZATION' },
      ]);
    });

    it('accepts the API key in X-API-Key', async () => {
      // Prepare
      const key = apiKeyFixture();
      storeKeys({ key });

      // Act
      const response = await invoke({
        method: 'GET',
        resource: '/api/widgets',
        headers: { 'X-API-Key': key.token },
      });

      // Assess
      expect(response.statusCode).toBe(200);
    });

    it('accepts a key restricted to the route scope, and a POST body that validates', async () => {
      // Prepare
      const key = apiKeyFixture({ scopes: ['conversations:read'] });
      storeKeys({ key });

      // Act
      const response = await invoke({
        method: 'POST',
        resource: '/api/widgets',
        headers: jsonHeaders(key),
        body: JSON.stringify({ name: 'Blue', tags: ['a'] }),
      });

      // Assess
      expect(response.statusCode).toBe(201);
      expect(JSON.parse(response.body)).toEqual({ name: 'Blue', tags: ['a'] });
    });

    it('keeps a well-formed client X-Request-Id and replaces a malformed one', async () => {
      // Prepare
      const key = apiKeyFixture();
      storeKeys({ key });

      // Act
      const kept = await invoke({
        method: 'GET',
        resource: '/api/widgets',
        headers: { ...bearer(key), 'X-Request-Id': 'client-trace-0001' },
      });
      const replaced = await invoke({
        method: 'GET',
        resource: '/api/widgets',
        headers: { ...bearer(key), 'X-Request-Id': 'bad id\n' },
        requestId: 'apigw-request-id-1',
      });

      // Assess
      expect(header(kept, 'X-Request-Id')).toBe('client-trace-0001');
      expect(header(replaced, 'X-Request-Id')).toBe('apigw-request-id-1');
    });
  });

  describe('routing, before authentication', () => {
    it('answers 405 with Allow for a known path and another method', async () => {
      // Act
      const response = await invoke({ method: 'DELETE', resource: '/api/widgets' });

      // Assess
      const error = expectError(response, 405, 'METHOD_NOT_ALLOWED');
      expect(header(response, 'Allow')).toBe('GET, POST');
      expect(error.details).toEqual({ allowed: ['GET', 'POST'] });
      expect(dynamoCalls()).toBe(0);
    });

    it('answers 404 for an unknown resource without reading any credential', async () => {
      // Prepare
      const key = apiKeyFixture();
      storeKeys({ key });

      // Act
      const anonymous = await invoke({ method: 'GET', resource: '/api/nothing-here' });
      const withKey = await invoke({ method: 'GET', resource: '/api/nothing-here', headers: bearer(key) });

      // Assess
      expectError(anonymous, 404, 'NOT_FOUND');
      expectError(withKey, 404, 'NOT_FOUND');
      expect(dynamoCalls()).toBe(0);
    });
  });

  describe('authentication', () => {
    it('answers 401 without a credential', async () => {
      // Act
      const response = await invoke({ method: 'GET', resource: '/api/widgets' });

      // Assess
      expectError(response, 401, 'UNAUTHORIZED');
      expect(header(response, 'WWW-Authenticate')).toBe('Bearer');
      expect(dynamoCalls()).toBe(0);
    });

    it('answers 401 when Authorization and X-API-Key carry different keys', async () => {
      // Prepare
      const key = apiKeyFixture();
      const other = apiKeyFixture();
      storeKeys({ key });

      // Act
      const response = await invoke({
        method: 'GET',
        resource: '/api/widgets',
        headers: { ...bearer(key), 'X-API-Key': other.token },
      });

      // Assess
      expectError(response, 401, 'UNAUTHORIZED');
      expect(dynamoCalls()).toBe(0);
    });

    it.each([
      ['a non-Bearer scheme', (key: ApiKeyFixture) => ({ Authorization: `Basic ${key.token}` })],
      ['a garbage token', () => ({ Authorization: 'Bearer svc_sk_not-a-real-key' })],
      ['a token without prefix', () => ({ Authorization: 'Bearer abc' })],
      ['an X-API-Key that is not an API key', () => ({ 'X-API-Key': 'svc_os_abc' })],
    ])('answers 401 for %s', async (_case, headers) => {
      // Prepare
      const key = apiKeyFixture();
      storeKeys({ key });

      // Act
      const response = await invoke({ method: 'GET', resource: '/api/widgets', headers: headers(key) });

      // Assess
      expectError(response, 401, 'UNAUTHORIZED');
    });

    it('answers 401 for a revoked key', async () => {
      // Prepare
      const key = apiKeyFixture({ revokedAt: '2026-11-20T10:00:00.000Z' });
      storeKeys({ key });

      // Act
      const response = await invoke({ method: 'GET', resource: '/api/widgets', headers: bearer(key) });

      // Assess
      expectError(response, 401, 'UNAUTHORIZED');
    });

    it('answers 401 for a well-formed key whose secret does not match the stored hash', async () => {
      // Prepare
      const key = apiKeyFixture();
      const other = mintOrgToken('apiKey', key.orgId);
      storeKeys({ key: { ...key, item: { ...key.item, hash: other.hash } } });

      // Act
      const response = await invoke({ method: 'GET', resource: '/api/widgets', headers: bearer(key) });

      // Assess
      expectError(response, 401, 'UNAUTHORIZED');
    });

    it('answers 401 for a key that is not stored', async () => {
      // Prepare
      const key = apiKeyFixture();
      storeKeys();

      // Act
      const response = await invoke({ method: 'GET', resource: '/api/widgets', headers: bearer(key) });

      // Assess
      expectError(response, 401, 'UNAUTHORIZED');
    });

    it('needs no DynamoDB read to authenticate a second request within the cache TTL', async () => {
      // Prepare
      const key = apiKeyFixture();
      storeKeys({ key });
      const first = await invoke({ method: 'GET', resource: '/api/widgets', headers: bearer(key) });
      const callsAfterFirst = dynamoCalls();

      // Act
      const second = await invoke({ method: 'GET', resource: '/api/widgets', headers: bearer(key) });

      // Assess
      expect([first.statusCode, second.statusCode]).toEqual([200, 200]);
      expect(ddb.commandCalls(BatchGetCommand)).toHaveLength(1);
      expect(dynamoCalls()).toBe(callsAfterFirst);
    });
  });

  describe('authorization', () => {
    it('answers 402 when the organization lacks automation_api', async () => {
      // Prepare
      const key = apiKeyFixture();
      storeKeys({ key, modules: ['chat'] });

      // Act
      const response = await invoke({ method: 'GET', resource: '/api/widgets', headers: bearer(key) });

      // Assess
      const error = expectError(response, 402, 'INTEGRATION_MODULE_REQUIRED');
      expect(error.details).toEqual({ module: 'automation_api', feature: 'public_api' });
    });

    it('answers 403 when the key lacks the route scope', async () => {
      // Prepare
      const key = apiKeyFixture({ scopes: ['webhooks:read', 'conversations:write'] });
      storeKeys({ key });

      // Act
      const response = await invoke({ method: 'GET', resource: '/api/widgets', headers: bearer(key) });

      // Assess
      const error = expectError(response, 403, 'FORBIDDEN');
      expect(error.details).toEqual({ requiredScope: 'conversations:read' });
    });
  });

  describe('request bodies', () => {
    it('answers 400 for malformed JSON', async () => {
      // Prepare
      const key = apiKeyFixture();
      storeKeys({ key });

      // Act
      const response = await invoke({
        method: 'POST',
        resource: '/api/widgets',
        headers: jsonHeaders(key),
        body: '{"name": "Blue",',
      });

      // Assess
      expectError(response, 400, 'BAD_REQUEST');
    });

    it('answers 413 for a body over 256 KiB, before reading any credential', async () => {
      // Prepare
      const key = apiKeyFixture();
      storeKeys({ key });
      const body = JSON.stringify({ name: 'x'.repeat(256 * 1024) });

      // Act
      const response = await invoke({
        method: 'POST',
        resource: '/api/widgets',
        headers: jsonHeaders(key),
        body,
      });

      // Assess
      expectError(response, 413, 'PAYLOAD_TOO_LARGE');
      expect(dynamoCalls()).toBe(0);
    });

    it('measures the limit in bytes: exactly 256 KiB is accepted for validation', async () => {
      // Prepare
      const key = apiKeyFixture();
      storeKeys({ key });
      const envelope = JSON.stringify({ name: '' });
      const exact = JSON.stringify({ name: 'x'.repeat(256 * 1024 - envelope.length) });
      const multiByte = JSON.stringify({ name: 'é'.repeat(256 * 512) });

      // Act
      const atLimit = await invoke({
        method: 'POST',
        resource: '/api/widgets',
        headers: jsonHeaders(key),
        body: exact,
      });
      const overInBytes = await invoke({
        method: 'POST',
        resource: '/api/widgets',
        headers: jsonHeaders(key),
        body: multiByte,
      });

      // Assess
      expect(Buffer.byteLength(exact)).toBe(256 * 1024);
      expect(expectError(atLimit, 422, 'VALIDATION_ERROR').details?.field).toBe('name');
      expectError(overInBytes, 413, 'PAYLOAD_TOO_LARGE');
    });

    it('answers 415 for a body that is not JSON', async () => {
      // Prepare
      const key = apiKeyFixture();
      storeKeys({ key });

      // Act
      const response = await invoke({
        method: 'POST',
        resource: '/api/widgets',
        headers: { ...bearer(key), 'Content-Type': 'text/plain' },
        body: 'name=Blue',
      });

      // Assess
      expectError(response, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('accepts JSON content types with parameters and +json suffixes', async () => {
      // Prepare
      const key = apiKeyFixture();
      storeKeys({ key });

      // Act
      const statuses = [];
      for (const contentType of ['application/json; charset=utf-8', 'application/merge-patch+json']) {
        const response = await invoke({
          method: 'POST',
          resource: '/api/widgets',
          headers: { ...bearer(key), 'Content-Type': contentType },
          body: '{"name":"Blue"}',
        });
        statuses.push(response.statusCode);
      }

      // Assess
      expect(statuses).toEqual([201, 201]);
    });

    it('answers 422 naming an unknown body field first', async () => {
      // Prepare
      const key = apiKeyFixture();
      storeKeys({ key });

      // Act
      const response = await invoke({
        method: 'POST',
        resource: '/api/widgets',
        headers: jsonHeaders(key),
        body: JSON.stringify({ name: '', orgId: 'someone-else' }),
      });

      // Assess
      const error = expectError(response, 422, 'VALIDATION_ERROR');
      expect(error.details?.field).toBe('orgId');
      expect(Object.keys(error.fields ?? {}).sort()).toEqual(['name', 'orgId']);
    });

    it('answers 422 for a query value that is not allowed', async () => {
      // Prepare
      const key = apiKeyFixture();
      storeKeys({ key });

      // Act
      const response = await invoke({
        method: 'GET',
        resource: '/api/widgets',
        headers: bearer(key),
        query: { limit: '101' },
      });

      // Assess
      expect(expectError(response, 422, 'VALIDATION_ERROR').details?.field).toBe('limit');
    });

    it('refuses a body sent to a route that takes none', async () => {
      // Prepare
      const key = apiKeyFixture();
      storeKeys({ key });

      // Act
      const response = await invoke({
        method: 'GET',
        resource: '/api/widgets',
        headers: jsonHeaders(key),
        body: '{"limit":"5"}',
      });

      // Assess
      expect(expectError(response, 422, 'VALIDATION_ERROR').details?.field).toBe('body');
    });

    it('never answers 5xx for arbitrary client bodies', async () => {
      // Prepare
      const key = apiKeyFixture();
      storeKeys({ key });

      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.string(),
            fc.json(),
            fc.jsonValue().map((value) => JSON.stringify(value)),
          ),
          fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded'),
          async (body, contentType) => {
            // Act
            const response = await invoke({
              method: 'POST',
              resource: '/api/widgets',
              headers: { ...bearer(key), 'Content-Type': contentType },
              body,
            });

            // Assess
            expect(response.statusCode).toBeLessThan(500);
          },
        ),
        { numRuns: 150 },
      );
    });
  });

  describe('failures', () => {
    it('answers a bare 500 INTERNAL_ERROR that reveals nothing of the thrown error', async () => {
      // Prepare
      const key = apiKeyFixture();
      storeKeys({ key });

      // Act
      const response = await invoke({ method: 'GET', resource: '/api/widgets/boom', headers: bearer(key) });

      // Assess
      const error = expectError(response, 500, 'INTERNAL_ERROR');
      expect(error.message).toBe('An internal error occurred');
      expect(response.body).not.toContain('secret-table');
      expect(response.body).not.toContain('hunter2');
      expect(response.body).not.toMatch(/at .*\.ts:\d+/);
      expect(error).not.toHaveProperty('details');
      expect(logger.error).toHaveBeenCalled();
    });

    it('answers 503 SERVICE_UNAVAILABLE with Retry-After when DynamoDB throttles the handler', async () => {
      // Prepare
      const key = apiKeyFixture();
      storeKeys({ key });
      ddb.on(GetCommand).rejects(new ThrottlingException({ message: 'Rate exceeded', $metadata: {} }));

      // Act
      const response = await invoke({
        method: 'GET',
        resource: '/api/widgets/organization',
        headers: bearer(key),
      });

      // Assess
      const error = expectError(response, 503, 'SERVICE_UNAVAILABLE');
      expect(header(response, 'Retry-After')).toBe('1');
      expect(error.message).not.toContain('Rate exceeded');
    });

    it('answers 503 when authentication itself is throttled', async () => {
      // Prepare
      const key = apiKeyFixture();
      ddb
        .on(BatchGetCommand)
        .rejects(
          Object.assign(new Error('throughput exceeded'), { name: 'ProvisionedThroughputExceededException' }),
        );

      // Act
      const response = await invoke({ method: 'GET', resource: '/api/widgets', headers: bearer(key) });

      // Assess
      expectError(response, 503, 'SERVICE_UNAVAILABLE');
      expect(header(response, 'Retry-After')).toBe('1');
    });
  });

  describe('rate limiting', () => {
    it('answers 429 with Retry-After and RateLimit-* headers once the shared window is spent', async () => {
      // Prepare
      const key = apiKeyFixture();
      storeKeys({ key });
      const limit = config.rateLimitPerMinute;
      ddb.on(UpdateCommand).rejects(
        new ConditionalCheckFailedException({
          message: 'The conditional request failed',
          $metadata: {},
          Item: { used: { N: String(limit) } },
        }),
      );

      // Act
      const response = await invoke({ method: 'GET', resource: '/api/widgets', headers: bearer(key) });

      // Assess
      const error = expectError(response, 429, 'RATE_LIMITED');
      const retryAfter = Number(header(response, 'Retry-After'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(error.details).toEqual({ retryAfterSeconds: retryAfter });
      expect(header(response, 'RateLimit-Limit')).toBe(String(limit));
      expect(header(response, 'RateLimit-Remaining')).toBe('0');
      expect(header(response, 'RateLimit-Reset')).toBe(String(retryAfter));
    });

    it('leases the rate-limit window under the caller organization and credential', async () => {
      // Prepare
      const key = apiKeyFixture();
      storeKeys({ key });

      // Act
      await invoke({ method: 'GET', resource: '/api/widgets', headers: bearer(key) });

      // Assess
      const updates = ddb.commandCalls(UpdateCommand);
      expect(updates).toHaveLength(1);
      expect(updates[0]?.args[0].input.Key?.pk).toBe(`ORG#${key.orgId}#RATE#${key.credentialId}`);
    });
  });
});
