import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { lambdaContext } from '../../infra/local/lambda-event';
import { call, createApiKey, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { eventually } from '../helpers/eventually';
import { useInProcessStack } from '../helpers/in-process-stack';
import { seedMessages } from '../helpers/table';
import { sqsRecord } from '../helpers/worker-faults';

useInProcessStack();

type Conversation = { id: string; status: string; version: number };

let tenant: Tenant;
let visitorToken: string;

beforeAll(async () => {
  tenant = await createTenant();
  visitorToken = (await createVisitor(tenant.widgetKey)).token;
});

/**
 * A visitor's conversation with `count` messages: the first posted through the API, the rest written
 * straight into the table (what the purge reads page by page; the API would take a minute for 230).
 */
async function conversationWithMessages(count: number): Promise<string> {
  const created = await call<Conversation & { visitorId: string }>('POST', '/api/conversations', {
    token: visitorToken,
    body: { message: 'message 0' },
  });
  await seedMessages(tenant.orgId, created.body.id, created.body.visitorId, count - 1);
  return created.body.id;
}

/** The stored messages of a conversation, read straight from the table (the API hides them once deleted). */
async function storedMessages(conversationId: string) {
  const client = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: inject('endpoints').dynamodb }));
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new QueryCommand({
        TableName: inject('tableName'),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': `ORG#${tenant.orgId}#CONV#${conversationId}`, ':prefix': 'MSG#' },
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

describe('bulk close', () => {
  it('closes every listed conversation, and changes nothing when one id is not the organization’s', async () => {
    const a = await conversationWithMessages(1);
    const b = await conversationWithMessages(0);
    const foreign = crypto.randomUUID();
    const refused = await call<{ error: { details: { ids: string[] } } }>(
      'POST',
      '/api/conversations/bulk-close',
      {
        token: tenant.apiKey,
        body: { conversationIds: [a, foreign, b, 'not-a-uuid'] },
      },
    );
    expect(refused.status).toBe(404);
    expect(refused.body.error.details.ids).toEqual([foreign, 'not-a-uuid']);
    expect(
      (await call<Conversation>('GET', `/api/conversations/${a}`, { token: tenant.apiKey })).body.status,
    ).toBe('open');

    const closed = await call('POST', '/api/conversations/bulk-close', {
      token: tenant.adminSession,
      body: { conversationIds: [a, b, a] },
    });
    expect(closed.body).toEqual({ success: true, closed: 2 });
    for (const id of [a, b]) {
      expect(
        (await call<Conversation>('GET', `/api/conversations/${id}`, { token: tenant.apiKey })).body,
      ).toMatchObject({ status: 'closed', version: 2 });
    }
    const again = await call('POST', '/api/conversations/bulk-close', {
      token: tenant.apiKey,
      body: { conversationIds: [a, b] },
    });
    expect(again.body).toEqual({ success: true, closed: 2 });
    expect(
      (await call<Conversation>('GET', `/api/conversations/${a}`, { token: tenant.apiKey })).body.version,
    ).toBe(2);
  });

  it('is for admins and keys with the scope only, with 1 to 100 ids', async () => {
    const a = await conversationWithMessages(0);
    expect(
      (
        await call('POST', '/api/conversations/bulk-close', {
          token: tenant.operatorSession,
          body: { conversationIds: [a] },
        })
      ).status,
    ).toBe(403);
    const readOnly = await createApiKey(tenant.orgId, ['conversations:read']);
    expect(
      (
        await call('POST', '/api/conversations/bulk-close', {
          token: readOnly.key,
          body: { conversationIds: [a] },
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await call('POST', '/api/conversations/bulk-close', {
          token: tenant.apiKey,
          body: { conversationIds: [] },
        })
      ).status,
    ).toBe(422);
    const tooMany = Array.from({ length: 101 }, () => crypto.randomUUID());
    expect(
      (
        await call('POST', '/api/conversations/bulk-close', {
          token: tenant.apiKey,
          body: { conversationIds: tooMany },
        })
      ).status,
    ).toBe(422);
  });
});

describe('bulk delete', () => {
  it('hides the conversations at once and marks all their messages deleted in the background', async () => {
    const big = await conversationWithMessages(230);
    const small = await conversationWithMessages(3);
    const deleted = await call('POST', '/api/conversations/bulk-delete', {
      token: tenant.apiKey,
      body: { conversationIds: [big, small] },
    });
    expect(deleted.body).toEqual({ success: true, deleted: 2 });
    for (const id of [big, small]) {
      expect((await call('GET', `/api/conversations/${id}`, { token: tenant.apiKey })).status).toBe(404);
      expect((await call('GET', `/api/conversations/${id}/messages`, { token: tenant.apiKey })).status).toBe(
        404,
      );
    }
    const listed = await call<{ data: { id: string }[] }>('GET', '/api/conversations?limit=100', {
      token: tenant.apiKey,
    });
    expect(listed.body.data.map((conversation) => conversation.id)).not.toContain(big);
    const messages = await eventually(
      () => storedMessages(big),
      (items) => items.every((item) => item.deletedAt),
      { timeoutMs: 20_000 },
    );
    expect(messages).toHaveLength(230);
    expect(messages.every((item) => item.deletedAt && item.content === '' && item.gsi1pk === undefined)).toBe(
      true,
    );
    expect(
      (
        await call('POST', '/api/conversations/bulk-delete', {
          token: tenant.apiKey,
          body: { conversationIds: [small] },
        })
      ).status,
    ).toBe(404);
  });

  it('resumes a purge that runs out of time from where it stopped', async () => {
    const id = await conversationWithMessages(150);
    const { handler } = await import('../../functions/workers/conversation-purge');
    const { queues } = await import('../../shared/queues');
    const handedOver: unknown[] = [];
    const send = vi.spyOn(queues, 'send').mockImplementation(async (_queue, body) => {
      handedOver.push(body);
    });
    try {
      // A worker with no time left does one page, then hands the rest back to the queue.
      const hurried = { ...lambdaContext('purge'), getRemainingTimeInMillis: () => 0 };
      const first = await handler(
        { Records: [sqsRecord('conversation-purge', { orgId: tenant.orgId, conversationId: id })] },
        hurried,
      );
      expect(first.batchItemFailures).toEqual([]);
      expect((await storedMessages(id)).filter((item) => item.deletedAt)).toHaveLength(100);
      expect(handedOver).toEqual([
        { orgId: tenant.orgId, conversationId: id, after: expect.stringMatching(/^MSG#/) },
      ]);

      // The continuation, delivered to a worker with time to spare, finishes the job.
      const second = await handler(
        { Records: [sqsRecord('conversation-purge', handedOver[0])] },
        lambdaContext('purge'),
      );
      expect(second.batchItemFailures).toEqual([]);
      expect((await storedMessages(id)).every((item) => item.deletedAt)).toBe(true);
      expect(handedOver).toHaveLength(1);
      // A poison message fails alone, to be retried and then dead-lettered (its error log is expected).
      const { logger } = await import('../../shared/logger');
      const quiet = vi.spyOn(logger, 'error').mockImplementation(() => undefined);
      const poison = await handler(
        { Records: [sqsRecord('conversation-purge', { nonsense: true })] },
        lambdaContext('purge'),
      );
      quiet.mockRestore();
      expect(poison.batchItemFailures).toHaveLength(1);
    } finally {
      send.mockRestore();
    }
  });
});
