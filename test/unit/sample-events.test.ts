import { readdirSync, readFileSync } from 'node:fs';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { fallbackGroup, routeTable } from '../../functions/routes';
import { authCache } from '../../shared/auth/authenticate';
import { keys } from '../../shared/db/keys';
import type { ApiHandler } from '../../shared/http/stack';
import { lambdaContext } from './helpers/apigw-event';
import { apiKeyFixture, batchGetFrom, organizationItem } from './helpers/auth-items';

/**
 * The sample events in events/apigw/ are what API Gateway sends; each one, run through the handler
 * of the group that owns its route (as deployed), gets the answer the contract promises.
 */
const expectedStatus: Record<string, number> = {
  health: 200,
  'get-conversation': 200,
  'list-conversations': 200,
  'create-conversation': 201,
  'unknown-route': 404,
};

const ddb = mockClient(DynamoDBDocumentClient);
afterAll(() => ddb.restore());

async function handlerFor(event: APIGatewayProxyEvent): Promise<ApiHandler> {
  const group =
    routeTable().find((candidate) =>
      candidate.routes.some((route) => route.method === event.httpMethod && route.path === event.resource),
    )?.name ?? fallbackGroup;
  const module = (await import(`../../functions/${group}/handler.ts`)) as { handler: ApiHandler };
  return module.handler;
}

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

const files = readdirSync(new URL('../../events/apigw/', import.meta.url)).filter((file) =>
  file.endsWith('.json'),
);

describe.each(files)('events/apigw/%s', (file) => {
  beforeEach(() => {
    ddb.reset();
    authCache.clear();
  });

  it('gets the documented answer from its group’s handler', async () => {
    const name = file.replace(/\.json$/, '');
    const key = apiKeyFixture();
    const raw = readFileSync(new URL(`../../events/apigw/${file}`, import.meta.url), 'utf8');
    const event = JSON.parse(raw.replaceAll('{{API_KEY}}', key.token)) as APIGatewayProxyEvent;
    const conversationId = event.pathParameters?.id ?? '01a200d1-479d-71be-a50a-39902031adcd';
    const visitorId = '01a200d1-2401-7c06-84af-03832858c44b';
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
    ddb.on(PutCommand).resolves({});
    ddb.on(TransactWriteCommand).resolves({});

    const handler = await handlerFor(event);
    const response = await handler(event, lambdaContext());

    expect(response.statusCode, response.body).toBe(expectedStatus[name]);
    expect(response.headers?.['X-Request-Id']).toBe(event.requestContext.requestId);
  });
});
