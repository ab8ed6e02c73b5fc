import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { workerDefinitions } from '../../functions/workers';
import { invokeFile } from '../../infra/local/invoke/invocation';
import { PLACEHOLDERS, placeholdersIn } from '../../infra/local/invoke/placeholders';
import { sampleEvents } from '../../infra/local/invoke/sample-events';
import type { InvokeSession } from '../../infra/local/invoke/session';
import { apiGroupNames, apiGroupOf, inferTarget, ROOT } from '../../infra/local/invoke/targets';
import { authCache } from '../../shared/auth/authenticate';
import { keys } from '../../shared/db/keys';
import { apiKeyFixture, batchGetFrom, organizationItem } from './helpers/auth-items';

/**
 * The sample events in events/ are what API Gateway, SQS and the table's stream send. Each one is
 * addressed to the function or worker its file is named for, uses only placeholders `npm run invoke`
 * fills, and — for the API samples below, with DynamoDB mocked — run through `npm run invoke`'s code
 * path, gets the answer the contract promises. test/integration/invoke.test.ts runs every sample
 * against the emulators.
 */
const mockedStatus: Record<string, number> = {
  'platform-health': 200,
  'platform-unknown-route': 404,
  'conversations-get': 200,
  'conversations-list': 200,
  'conversations-create': 201,
  'uploads-create': 201,
  'identity-me': 200,
  'webhooks-list': 200,
  'exports-conversations': 200,
};

const files = sampleEvents();
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const folderOf = (file: string) => file.split('/')[1];
const nameOf = (file: string) => file.replace(/^.*\//, '').replace(/\.json$/, '');

interface StreamRecord {
  eventSource: string;
  eventName: string;
  dynamodb: {
    Keys?: Record<string, { S?: string }>;
    NewImage?: Record<string, { S?: string }>;
    OldImage?: Record<string, { S?: string }>;
  };
}
interface QueueRecord {
  eventSource: string;
  eventSourceARN: string;
  messageId: string;
  body: string;
}

describe.each(files)('%s', (file) => {
  it('is addressed to its function, with placeholders `npm run invoke` knows', async () => {
    const text = read(file);
    const event = JSON.parse(text);
    for (const name of placeholdersIn(text)) expect(Object.keys(PLACEHOLDERS)).toContain(name);
    const target = inferTarget(file, event);
    const folder = folderOf(file);
    if (folder === 'apigw') {
      const proxy = event as APIGatewayProxyEvent;
      expect(target).toBe('api');
      // `<group>-<variant>.json`: the group API Gateway sends the event to.
      expect(nameOf(file).startsWith(`${await apiGroupOf(proxy)}-`)).toBe(true);
      expect(proxy.requestContext.resourcePath).toBe(proxy.resource);
      expect(proxy.requestContext.httpMethod).toBe(proxy.httpMethod);
      expect(proxy.requestContext.path.endsWith(proxy.path)).toBe(true);
      for (const [name, value] of Object.entries(proxy.headers)) {
        expect(proxy.multiValueHeaders[name]).toEqual([value]);
      }
      return;
    }
    if (folder === 'websocket') {
      expect(target).toMatchObject({ kind: 'websocket', name: 'realtime' });
      expect(typeof event.requestContext.connectionId).toBe('string');
      return;
    }
    expect(target).toMatchObject({ kind: 'worker' });
    if (typeof target !== 'object' || target.kind !== 'worker') return;
    if (folder === 'sqs') {
      expect(target.source.kind).toBe('queue');
      for (const record of event.Records as QueueRecord[]) {
        expect(record.eventSource).toBe('aws:sqs');
        if (target.source.kind === 'queue')
          expect(record.eventSourceARN.endsWith(`-${target.source.queue}`)).toBe(true);
        expect(() => JSON.parse(record.body)).not.toThrow();
      }
    } else {
      expect(folder).toBe('dynamodb');
      expect(target.source.kind).toBe('stream');
      for (const record of event.Records as StreamRecord[]) {
        expect(record.eventSource).toBe('aws:dynamodb');
        expect(record.dynamodb.Keys?.pk?.S).toBeTruthy();
        expect(record.dynamodb.Keys?.sk?.S).toBeTruthy();
        // The entity the worker's event-source filter lets through.
        if (target.source.kind === 'stream') {
          if (record.eventName === 'REMOVE')
            expect(target.source.removals ?? []).toContain(record.dynamodb.OldImage?.entity?.S);
          else expect(target.source.entities).toContain(record.dynamodb.NewImage?.entity?.S);
        }
      }
    }
  });
});

describe('events/', () => {
  it('holds a sample for every endpoint group, the realtime handler and every worker', async () => {
    const covered = new Set<string>();
    for (const file of files) {
      const event = JSON.parse(read(file));
      const target = inferTarget(file, event);
      covered.add(target === 'api' ? await apiGroupOf(event) : (target?.name ?? file));
    }
    for (const name of [...apiGroupNames(), 'realtime', ...workerDefinitions.map((worker) => worker.name)]) {
      expect(covered, name).toContain(name);
    }
  });
});

const ddb = mockClient(DynamoDBDocumentClient);
afterAll(() => ddb.restore());

function conversationItem(orgId: string, id: string, visitorId: string) {
  const now = '2026-11-20T10:00:00.000Z';
  return {
    ...keys.conversation(orgId, id),
    id,
    organizationId: orgId,
    visitorId,
    operatorId: null,
    status: 'open',
    lastMessageAt: now,
    version: 3,
    visitor: { id: visitorId, identifier: 'ada@example.com' },
  };
}

describe.each(Object.entries(mockedStatus))('events/apigw/%s.json with DynamoDB mocked', (name, status) => {
  beforeEach(() => {
    ddb.reset();
    authCache.clear();
    // Presigning (uploads) is local crypto: a bucket and credentials, no call to S3.
    vi.stubEnv('UPLOAD_BUCKET_NAME', 'sample-uploads');
    vi.stubEnv('AWS_REGION', 'eu-west-1');
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
  });
  afterEach(() => vi.unstubAllEnvs());

  it('gets the documented answer from its group’s handler', async () => {
    const key = apiKeyFixture();
    const conversationId = '01a200d1-479d-71be-a50a-39902031adcd';
    const visitorId = '01a200d1-2401-7c06-84af-03832858c44b';
    const session: InvokeSession = {
      mode: 'attached',
      baseUrl: 'http://localhost:3000',
      values: {
        DEMO_ORG_ID: key.orgId,
        DEMO_API_KEY: key.token,
        DEMO_VISITOR_ID: visitorId,
        DEMO_CONVERSATION_ID: conversationId,
      },
      progress: () => undefined,
      close: async () => undefined,
    };
    ddb.on(BatchGetCommand).callsFake(batchGetFrom([key.item, organizationItem(key.orgId)]));
    ddb
      .on(UpdateCommand)
      .callsFake((input) => ({ Attributes: { used: input.ExpressionAttributeValues?.[':wanted'] } }));
    ddb.on(GetCommand, { Key: keys.conversation(key.orgId, conversationId) }).resolves({
      Item: conversationItem(key.orgId, conversationId, visitorId),
    });
    ddb
      .on(GetCommand, { Key: keys.visitor(key.orgId, visitorId) })
      .resolves({ Item: { id: visitorId, identifier: 'ada@example.com' } });
    ddb.on(QueryCommand).resolves({ Items: [conversationItem(key.orgId, conversationId, visitorId)] });
    ddb
      .on(QueryCommand, { ExpressionAttributeValues: { ':pk': keys.webhooksPartition(key.orgId) } })
      .resolves({ Items: [] });
    ddb.on(PutCommand).resolves({});
    ddb.on(TransactWriteCommand).resolves({});

    const invocation = await invokeFile(session, join(ROOT, `events/apigw/${name}.json`));
    const response = invocation.result as APIGatewayProxyResult;
    const event = invocation.event as APIGatewayProxyEvent;

    expect(invocation.target).toMatchObject({ kind: 'api', name: name.split('-')[0] });
    expect(response.statusCode, response.body).toBe(status);
    expect(response.headers?.['X-Request-Id']).toBe(event.requestContext.requestId);
  });
});
