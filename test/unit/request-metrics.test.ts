import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { apiGatewayEvent, lambdaContext } from './helpers/apigw-event';
import { captureStdout, enableMetrics } from './helpers/stdout-capture';

/**
 * What one API request tells CloudWatch: its EMF metric lines (shared/metrics.ts) and its access
 * line. DynamoDB is a fake HTTP endpoint, not a client mock, so the SDK's own retry loop and the
 * meter's middleware run as they do in Lambda: the first GetItem is throttled, the retry succeeds.
 */

interface FakeDynamo {
  server: Server;
  throttleNext: number;
  calls: string[];
}

const fake: FakeDynamo = { server: createServer(), throttleNext: 0, calls: [] };

function answer(request: IncomingMessage, response: ServerResponse): void {
  const target = String(request.headers['x-amz-target'] ?? '').replace('DynamoDB_20120810.', '');
  request.resume();
  request.on('end', () => {
    fake.calls.push(target);
    response.setHeader('content-type', 'application/x-amz-json-1.0');
    if (fake.throttleNext > 0) {
      fake.throttleNext -= 1;
      response.statusCode = 400;
      response.end(
        JSON.stringify({
          __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
          message: 'Rate of requests exceeds the allowed throughput',
        }),
      );
      return;
    }
    response.end(
      JSON.stringify({
        Item: { pk: { S: 'ORG#o' }, sk: { S: 'THING' }, name: { S: 'a thing' } },
        ConsumedCapacity: { TableName: 'metrics-table', CapacityUnits: 0.5 },
      }),
    );
  });
}

type Handler = (
  event: ReturnType<typeof apiGatewayEvent>,
  context: typeof lambdaContext,
) => Promise<APIGatewayProxyResult>;
let handler: Handler;

/** The stack over two test routes, built from modules as loaded now (they read the environment once). */
async function handlerOfThings(): Promise<Handler> {
  const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
  const { db, tableName } = await import('../../shared/db/client');
  const { ConflictError } = await import('../../shared/errors');
  const { ok, route } = await import('../../shared/http/route');
  const { createHandler } = await import('../../shared/http/stack');
  const z = await import('../../shared/schemas/zod');
  const common = {
    summary: 'A thing',
    tag: 'Test',
    callers: ['public'] as const,
    response: { status: 200, schema: z.unknown(), description: 'The thing' },
  };
  return createHandler([
    route({
      ...common,
      method: 'GET',
      path: '/api/thing',
      operationId: 'getThing',
      handle: async () => {
        const read = await db.send(
          new GetCommand({ TableName: tableName, Key: { pk: 'ORG#o', sk: 'THING' } }),
        );
        return ok(read.Item ?? null);
      },
    }),
    route({
      ...common,
      method: 'POST',
      path: '/api/thing',
      operationId: 'raceThing',
      handle: async () => {
        throw new ConflictError('someone else changed the thing');
      },
    }),
  ]) as unknown as Handler;
}
let stdout: ReturnType<typeof captureStdout>;

beforeAll(async () => {
  fake.server.on('request', answer);
  await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
  const { port } = fake.server.address() as AddressInfo;
  // Before the modules load: the client, the logger and the metrics read these once.
  vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', `http://127.0.0.1:${port}`);
  vi.stubEnv('AWS_REGION', 'eu-west-1');
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
  vi.stubEnv('TABLE_NAME', 'metrics-table');
  vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'INFO');
  enableMetrics('things');
  // What Lambda sets for an on-demand instance (provisioned ones report no cold start).
  vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand');

  handler = await handlerOfThings();

  stdout = captureStdout();
});

afterAll(async () => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  await new Promise((resolve) => fake.server.close(resolve));
});

beforeEach(() => {
  stdout.clear();
  fake.calls.length = 0;
});

const metricLines = () => stdout.metricLines();

const accessLines = () => stdout.jsonLines().filter((line) => line.message === 'request');

describe('the metrics and the access line of one request', () => {
  it('emits the route’s latency, status class, retries and throttles under service + route', async () => {
    fake.throttleNext = 1;
    const response = await handler(apiGatewayEvent({ method: 'GET', resource: '/api/thing' }), lambdaContext);
    expect(response.statusCode).toBe(200);
    // The SDK retried the throttled GetItem once.
    expect(fake.calls).toEqual(['GetItem', 'GetItem']);

    const request = metricLines().find((line) => line.route === 'getThing');
    expect(request).toBeDefined();
    const directive = request?._aws.CloudWatchMetrics[0];
    expect(directive?.Namespace).toBe('ConversationService');
    expect(directive?.Dimensions).toEqual([['service', 'route']]);
    expect(request).toMatchObject({
      service: 'conversation-service',
      route: 'getThing',
      Requests: 1,
      Status2xx: 1,
      Status4xx: 0,
      Status5xx: 0,
      Conflicts: 0,
      DynamoDbRetries: 1,
      DynamoDbThrottles: 1,
    });
    expect(request?.Latency).toEqual(expect.any(Number));
    expect(directive?.Metrics).toContainEqual({ Name: 'Latency', Unit: 'Milliseconds' });

    const access = accessLines().at(-1);
    expect(access).toMatchObject({
      route: 'getThing',
      status: 200,
      dynamoCommands: 1,
      dynamoRequests: 2,
      dynamoThrottles: 1,
      readCapacityUnits: 0.5,
      writeCapacityUnits: 0,
    });
    expect(access?.durationMs).toEqual(expect.any(Number));

    // This instance's first invocation: ColdStart, under the function's name.
    const cold = metricLines().find((line) => 'ColdStart' in line);
    expect(cold).toMatchObject({ ColdStart: 1, function_name: 'things', service: 'conversation-service' });
    expect(cold?._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([['service', 'function_name']]);
  });

  it('counts a 409 as a conflict and a 4xx, with no DynamoDB work', async () => {
    const response = await handler(
      apiGatewayEvent({
        method: 'POST',
        resource: '/api/thing',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      }),
      lambdaContext,
    );
    expect(response.statusCode).toBe(409);
    const request = metricLines().find((line) => line.route === 'raceThing');
    expect(request).toMatchObject({ Status2xx: 0, Status4xx: 1, Conflicts: 1, DynamoDbRetries: 0 });
    expect(accessLines().at(-1)).toMatchObject({ status: 409, dynamoCommands: 0, readCapacityUnits: 0 });
  });

  it('reports a cold start once per instance, under service + function_name', async () => {
    // The first test's request was this instance's first invocation; none since.
    await handler(apiGatewayEvent({ method: 'GET', resource: '/api/thing' }), lambdaContext);
    expect(metricLines().filter((line) => 'ColdStart' in line)).toEqual([]);
  });

  it('writes at INFO the access line with every field the saved Logs Insights queries read', async () => {
    // infra/constructs/log-queries.ts filters on message = "request" and reads these fields.
    await handler(apiGatewayEvent({ method: 'GET', resource: '/api/thing' }), lambdaContext);
    const access = accessLines().at(-1);
    expect(access).toMatchObject({
      level: 'INFO',
      message: 'request',
      service: 'conversation-service',
      requestId: expect.any(String),
      method: 'GET',
      path: '/api/thing',
      route: 'getThing',
      status: 200,
      durationMs: expect.any(Number),
      callerKind: 'public',
      dynamoCommands: 1,
      dynamoRequests: 1,
      dynamoThrottles: 0,
      readCapacityUnits: 0.5,
      writeCapacityUnits: 0,
    });
    expect(metricLines().filter((line) => line.route === 'getThing')).toHaveLength(1);
  });

  it('writes the EMF document alone when the access line is off (WARN)', async () => {
    vi.resetModules();
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'WARN');
    const quiet = await handlerOfThings();
    stdout.clear();
    await quiet(apiGatewayEvent({ method: 'GET', resource: '/api/thing' }), lambdaContext);
    const lines = stdout.jsonLines().filter((line) => line.route === 'getThing');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ route: 'getThing', Requests: 1, Status2xx: 1 });
    expect(lines[0]).not.toHaveProperty('message');
  });

  it('answers an unknown path under the `unmatched` route, not the raw path', async () => {
    const response = await handler(
      apiGatewayEvent({ method: 'GET', resource: '/api/nothing/{id}', path: '/api/nothing/42' }),
      lambdaContext,
    );
    expect(response.statusCode).toBe(404);
    const routes = metricLines().map((line) => line.route);
    expect(routes).toEqual(['unmatched']);
  });
});
