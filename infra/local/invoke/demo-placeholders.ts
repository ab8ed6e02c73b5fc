import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { lambdaContext, proxyEvent } from '../lambda-event';
import { loadHandler } from './handler';
import { placeholdersIn } from './placeholders';
import type { InvokeSession } from './session';
import { apiGroupOf } from './targets';

/**
 * The placeholders no state file can hold: real ids of the demo organization (its newest
 * conversation, its newest domain event and that event's partition key), read through the
 * handlers, or made through them when there is none yet, so a sample event always names something
 * that exists. Plus the values of the moment (`UUID`, `NOW`).
 */

async function callApi(
  session: InvokeSession,
  method: string,
  resource: string,
  options: { token: string; query?: Record<string, string>; body?: unknown },
): Promise<{ status: number; body: Record<string, unknown> }> {
  const group = await apiGroupOf({ httpMethod: method, resource });
  const handler = await loadHandler(session, { name: group, entry: `functions/${group}/handler.ts` });
  const event = proxyEvent({
    method,
    resource,
    headers: {
      Authorization: `Bearer ${options.token}`,
      'User-Agent': 'npm-run-invoke',
      ...(options.body === undefined
        ? {}
        : { 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() }),
    },
    query: options.query ?? null,
    body: options.body === undefined ? null : JSON.stringify(options.body),
  });
  const result = (await handler(event, lambdaContext(`local-${group}`))) as APIGatewayProxyResult;
  return { status: result.statusCode, body: JSON.parse(result.body || '{}') as Record<string, unknown> };
}

function need(values: Record<string, string>, name: string): string {
  const value = values[name];
  if (!value) throw new Error(`{{${name}}} is unknown here: the stack has no demo organization`);
  return value;
}

async function demoConversation(session: InvokeSession): Promise<string> {
  const token = need(session.values, 'DEMO_API_KEY');
  const listed = await callApi(session, 'GET', '/api/conversations', { token, query: { limit: '1' } });
  const first = (listed.body.data as { id: string }[] | undefined)?.[0]?.id;
  if (listed.status === 200 && first) return first;
  if (listed.status !== 200) session.progress(`listing the demo conversations answered ${listed.status}`);
  const created = await callApi(session, 'POST', '/api/conversations', {
    token,
    body: { visitorId: need(session.values, 'DEMO_VISITOR_ID'), message: 'Hello from npm run invoke' },
  });
  if (created.status !== 201 || typeof created.body.id !== 'string') {
    throw new Error(`starting a demo conversation failed: ${created.status} ${JSON.stringify(created.body)}`);
  }
  session.progress(`started demo conversation ${created.body.id} for {{DEMO_CONVERSATION_ID}}`);
  return created.body.id;
}

async function newestEvent(orgId: string): Promise<string | undefined> {
  const { QueryCommand } = await import('@aws-sdk/lib-dynamodb');
  const { db, tableName } = await import('../../../shared/db/client');
  const { keys } = await import('../../../shared/db/keys');
  // The events lie in several shard partitions: the newest of their newest is the organization's.
  const newest = await Promise.all(
    keys.eventsPartitions(orgId).map(async (pk) => {
      const { Items } = await db.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': pk, ':prefix': keys.eventPrefix },
          ScanIndexForward: false,
          ConsistentRead: true,
          Limit: 1,
        }),
      );
      return Items?.[0];
    }),
  );
  const id = newest
    .filter((item) => item !== undefined)
    .sort((a, b) => (String(a.sk) < String(b.sk) ? 1 : -1))[0]?.id;
  return typeof id === 'string' ? id : undefined;
}

async function demoEvent(session: InvokeSession): Promise<string> {
  const orgId = need(session.values, 'DEMO_ORG_ID');
  let id = await newestEvent(orgId);
  if (!id) {
    // A new conversation writes its conversation.created event in the same transaction.
    session.values.DEMO_CONVERSATION_ID ??= await demoConversation(session);
    id = await newestEvent(orgId);
  }
  if (!id) throw new Error('the demo organization has no domain event');
  return id;
}

/** Values for every placeholder the text uses, computing the ones that need the stack. */
export async function placeholderValues(
  session: InvokeSession,
  text: string,
): Promise<Record<string, string>> {
  const wanted = placeholdersIn(text);
  const values: Record<string, string> = {
    UUID: randomUUID(),
    NOW: new Date().toISOString(),
    NOW_MS: String(Date.now()),
    ...session.values,
  };
  if (wanted.includes('DEMO_CONVERSATION_ID') && !values.DEMO_CONVERSATION_ID) {
    values.DEMO_CONVERSATION_ID = session.values.DEMO_CONVERSATION_ID = await demoConversation(session);
  }
  if ((wanted.includes('DEMO_EVENT_ID') || wanted.includes('DEMO_EVENT_PK')) && !values.DEMO_EVENT_ID) {
    values.DEMO_EVENT_ID = await demoEvent(session);
  }
  if (wanted.includes('DEMO_EVENT_PK') && values.DEMO_EVENT_ID && !values.DEMO_EVENT_PK) {
    const { keys } = await import('../../../shared/db/keys');
    values.DEMO_EVENT_PK = keys.event(need(session.values, 'DEMO_ORG_ID'), values.DEMO_EVENT_ID).pk;
  }
  return values;
}
