import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { lambdaContext } from '../../infra/local/lambda-event';
import { INDEX_LAG_MS } from '../../shared/db/index-lag';
import { keys } from '../../shared/db/keys';
import { call, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { eventually } from '../helpers/eventually';
import { useInProcessStack } from '../helpers/in-process-stack';
import { crashOnNth, sqsRecord } from '../helpers/worker-faults';

/**
 * POST /api/visitors/{id}/merge: the source's conversations move to the target, its profile
 * merges into the target's, its tokens stop working; the move is bounded and resumable.
 */
useInProcessStack();

interface Profile {
  id: string;
  identifier: string;
  name: string | null;
  email: string | null;
  externalId: string | null;
  metadata: Record<string, unknown>;
  totalSessions: number;
  conversationCount: number;
  version: number;
  mergedInto: string | null;
}
interface Conversation {
  id: string;
  visitorId: string;
  visitor: { id: string };
  status: string;
  version: number;
  messageCount: number;
  title: string;
}
interface Page<T> {
  data: T[];
  nextCursor: string | null;
}
interface ErrorBody {
  error: { code: string; details?: { reason?: string; field?: string } };
}

let tenant: Tenant;
let other: Tenant;
let client: DynamoDBDocumentClient;

beforeAll(async () => {
  [tenant, other] = await Promise.all([createTenant(), createTenant()]);
  client = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: inject('endpoints').dynamodb }));
});

afterAll(() => client.destroy());

async function startConversation(visitorId: string, message: string): Promise<Conversation> {
  const created = await call<Conversation>('POST', '/api/conversations', {
    token: tenant.apiKey,
    body: { visitorId, message },
  });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

async function conversationIdsOf(visitorId: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `/api/conversations?visitorId=${visitorId}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await call<Page<Conversation>>('GET', query, { token: tenant.apiKey });
    expect(page.status, page.text).toBe(200);
    ids.push(...page.body.data.map((conversation) => conversation.id));
    cursor = page.body.nextCursor;
  } while (cursor);
  return ids.sort();
}

/** The visitor's conversations once its listing (an index) shows every write made before the call. */
async function settledIdsOf(visitorId: string): Promise<string[]> {
  await new Promise((resolve) => setTimeout(resolve, INDEX_LAG_MS));
  return conversationIdsOf(visitorId);
}

const merge = (targetId: string, sourceVisitorId: string, token = tenant.apiKey) =>
  call<Profile & ErrorBody>('POST', `/api/visitors/${targetId}/merge`, { token, body: { sourceVisitorId } });

describe('POST /api/visitors/{id}/merge', () => {
  it('moves the conversations, merges the profile and revokes the source’s tokens', async () => {
    const target = await createVisitor(tenant.widgetKey, {
      identifier: 'target@example.com',
      metadata: { plan: 'pro' },
    });
    const source = await createVisitor(tenant.widgetKey, {
      identifier: 'source@example.com',
      metadata: { plan: 'free', company: 'Acme' },
    });
    const mine = await startConversation(target.visitor.id, 'target conversation');
    const theirs = await Promise.all([
      startConversation(source.visitor.id, 'first of the source'),
      startConversation(source.visitor.id, 'second of the source'),
    ]);
    // The source's token works before the merge.
    expect((await call('GET', `/api/conversations/${theirs[0]?.id}`, { token: source.token })).status).toBe(
      200,
    );
    const before = await call<Conversation>('GET', `/api/conversations/${theirs[0]?.id}`, {
      token: tenant.apiKey,
    });

    const merged = await merge(target.visitor.id, source.visitor.id);

    expect(merged.status, merged.text).toBe(200);
    expect(merged.body).toMatchObject({
      id: target.visitor.id,
      identifier: 'target@example.com',
      metadata: { plan: 'pro', company: 'Acme' },
      totalSessions: 2,
      conversationCount: 3,
      mergedInto: null,
      version: 2,
    });
    expect(merged.headers.get('etag')).toBe('"2"');
    // The conversations moved: listed under the target, none left under the source.
    expect(await conversationIdsOf(target.visitor.id)).toEqual([mine.id, ...theirs.map((c) => c.id)].sort());
    expect(await conversationIdsOf(source.visitor.id)).toEqual([]);
    // visitorId changes (and the embedded visitor with it), nothing else.
    const after = await call<Conversation>('GET', `/api/conversations/${theirs[0]?.id}`, {
      token: tenant.apiKey,
    });
    expect(after.body).toMatchObject({
      visitorId: target.visitor.id,
      visitor: { id: target.visitor.id },
      status: before.body.status,
      version: before.body.version,
      messageCount: before.body.messageCount,
      title: before.body.title,
    });
    // The source is marked, and its token no longer works; the target's still does.
    const gotSource = await call<Profile>('GET', `/api/visitors/${source.visitor.id}`, {
      token: tenant.apiKey,
    });
    expect(gotSource.body.mergedInto).toBe(target.visitor.id);
    expect((await call('GET', `/api/conversations/${theirs[0]?.id}`, { token: source.token })).status).toBe(
      401,
    );
    expect((await call('GET', `/api/conversations/${theirs[0]?.id}`, { token: target.token })).status).toBe(
      200,
    );
    // Out of the listing, not out of the sync.
    const listed = await call<Page<Profile>>('GET', '/api/visitors?identifier=source@example.com', {
      token: tenant.apiKey,
    });
    expect(listed.body.data).toEqual([]);

    // The event and the audit entry.
    const event = await eventually(
      async () =>
        (
          await call<Page<{ type: string; data: Profile }>>(
            'GET',
            '/api/events?types=visitor.merged&limit=100',
            {
              token: tenant.apiKey,
            },
          )
        ).body.data.find((entry) => entry.data.id === target.visitor.id),
      (found) => found !== undefined,
      { timeoutMs: 10_000 },
    );
    expect(event?.data).toMatchObject({ totalSessions: 2, metadata: { plan: 'pro', company: 'Acme' } });
    const audit = await call<
      Page<{ type: string; target: { id: string }; details: Record<string, unknown> }>
    >('GET', '/api/audit-events?type=visitor.merged', { token: tenant.apiKey });
    expect(audit.status, audit.text).toBe(200);
    expect(audit.body.data.find((entry) => entry.target.id === target.visitor.id)?.details).toMatchObject({
      sourceVisitorId: source.visitor.id,
    });
  });

  it('hands the source’s external id to a target without one', async () => {
    const externalId = `crm-${crypto.randomUUID()}`;
    const source = await call<Profile>('PUT', `/api/visitors/by-external-id/${externalId}`, {
      token: tenant.apiKey,
      body: { name: 'Ada', email: 'ada@example.com' },
    });
    const target = await createVisitor(tenant.widgetKey);
    const merged = await merge(target.visitor.id, source.body.id);
    expect(merged.body).toMatchObject({ externalId, name: 'Ada', email: 'ada@example.com' });
    const byExternalId = await call<Page<Profile>>('GET', `/api/visitors?externalId=${externalId}`, {
      token: tenant.apiKey,
    });
    expect(byExternalId.body.data.map((visitor) => visitor.id)).toEqual([target.visitor.id]);
  });

  it('answers 409 for a source already merged and for the target itself, 404/422 for foreign ids', async () => {
    const [target, source, third] = await Promise.all([
      createVisitor(tenant.widgetKey),
      createVisitor(tenant.widgetKey),
      createVisitor(tenant.widgetKey),
    ]);
    const itself = await merge(target.visitor.id, target.visitor.id);
    expect(itself.status).toBe(409);
    expect(itself.body.error.details).toMatchObject({ reason: 'same_visitor' });

    expect((await merge(target.visitor.id, source.visitor.id)).status).toBe(200);
    const again = await merge(third.visitor.id, source.visitor.id);
    expect(again.status).toBe(409);
    expect(again.body.error.details).toMatchObject({ reason: 'already_merged', field: 'sourceVisitorId' });
    const intoMerged = await merge(source.visitor.id, third.visitor.id);
    expect(intoMerged.status).toBe(409);

    const foreign = await createVisitor(other.widgetKey);
    expect((await merge(foreign.visitor.id, third.visitor.id)).status).toBe(404);
    const foreignSource = await merge(third.visitor.id, foreign.visitor.id);
    expect(foreignSource.status).toBe(422);
    expect(foreignSource.body.error.details).toMatchObject({ field: 'sourceVisitorId' });
    // Visitors cannot merge; operators without admin rights can (visitors:write).
    expect((await merge(third.visitor.id, source.visitor.id, third.token)).status).toBe(403);
  });

  it('moves in bounded batches and resumes after a crash, changing nothing twice', async () => {
    const target = await createVisitor(tenant.widgetKey);
    const source = await createVisitor(tenant.widgetKey);
    const count = 60;
    for (let i = 0; i < count; i += 10)
      await Promise.all(
        Array.from({ length: Math.min(10, count - i) }, (_, j) =>
          startConversation(source.visitor.id, `conversation ${i + j}`),
        ),
      );

    // Mark the source merged behind the stream's back (a Delete and a Put are no MODIFY, so no
    // job is sent), as a merge that committed and then lost its request would leave it.
    const table = inject('tableName');
    const sourceKey = keys.visitor(tenant.orgId, source.visitor.id);
    const stored = (
      await client.send(new GetCommand({ TableName: table, Key: sourceKey, ConsistentRead: true }))
    ).Item as Record<string, unknown>;
    await client.send(new DeleteCommand({ TableName: table, Key: sourceKey }));
    const { gsi1pk: _pk, gsi1sk: _sk, ...unlisted } = stored;
    await client.send(
      new PutCommand({
        TableName: table,
        Item: { ...unlisted, mergedInto: target.visitor.id, rev: Number(stored.rev ?? 1) + 1 },
      }),
    );

    const { visitorMerge, MOVE_PAGE } = await import('../../shared/db/visitor-merge');
    const { handler } = await import('../../functions/workers/visitor-jobs');
    const { queues } = await import('../../shared/queues');
    const { db } = await import('../../shared/db/client');
    const { logger } = await import('../../shared/logger');
    const handedOver: { after?: string }[] = [];
    const send = vi.spyOn(queues, 'send').mockImplementation(async (_queue, body) => {
      handedOver.push(body as { after?: string });
    });
    const quiet = vi.spyOn(logger, 'error').mockImplementation(() => undefined);
    // The 30th conversation write dies, as a worker would mid-page.
    const crash = crashOnNth(db, UpdateCommand, 30);
    try {
      await expect(
        visitorMerge.moveConversations(tenant.orgId, source.visitor.id, performance.now() + 60_000),
      ).rejects.toThrow('crash');
      // Moves made directly (no request waited for them to show): read once the listings show them.
      const partly = await settledIdsOf(target.visitor.id);
      expect(partly.length).toBeGreaterThan(0);
      expect(partly.length).toBeLessThan(count);

      // A worker with no time left moves one page per invocation, then hands the job back.
      const hurried = { ...lambdaContext('visitor-jobs'), getRemainingTimeInMillis: () => 0 };
      const job = { orgId: tenant.orgId, visitorId: source.visitor.id, kind: 'merge' as const };
      let invocations = 0;
      for (;;) {
        invocations++;
        expect(invocations).toBeLessThan(10);
        const seen = handedOver.length;
        const result = await handler({ Records: [sqsRecord('visitor-jobs', job)] }, hurried);
        expect(result.batchItemFailures).toEqual([]);
        const next = handedOver.slice(seen);
        if (next.some((body) => body.after === 'sweep')) break;
      }
      // More than one bounded batch, each within the page size.
      expect(invocations).toBeGreaterThanOrEqual(Math.ceil((count - partly.length) / MOVE_PAGE));
      expect(await settledIdsOf(source.visitor.id)).toEqual([]);
      expect(await conversationIdsOf(target.visitor.id)).toHaveLength(count);

      // The last pass (and any repeated job) finds nothing to move.
      expect(
        await visitorMerge.moveConversations(tenant.orgId, source.visitor.id, performance.now() + 60_000),
      ).toEqual({ moved: 0, done: true, merged: true });
    } finally {
      send.mockRestore();
      crash.mockRestore();
      quiet.mockRestore();
    }
  }, 120_000);

  it('moves and counts conversations started a moment before, which the source’s listing did not show yet', async () => {
    const target = await createVisitor(tenant.widgetKey);
    const source = await createVisitor(tenant.widgetKey);
    const mine = await startConversation(target.visitor.id, 'the target’s own');
    const theirs = [
      await startConversation(source.visitor.id, 'started a moment before the merge'),
      await startConversation(source.visitor.id, 'and another one'),
    ];
    // What a lagging index shows right after: the source's listing (gsi4) without them.
    const table = inject('tableName');
    const hidden = await Promise.all(
      theirs.map(async ({ id }) => {
        const Key = keys.conversation(tenant.orgId, id);
        const item = (await client.send(new GetCommand({ TableName: table, Key, ConsistentRead: true })))
          .Item;
        await client.send(
          new UpdateCommand({ TableName: table, Key, UpdateExpression: 'REMOVE gsi4pk, gsi4sk' }),
        );
        return { Key, gsi4pk: item?.gsi4pk, gsi4sk: item?.gsi4sk };
      }),
    );

    const merging = merge(target.visitor.id, source.visitor.id);
    // The index shows them a moment later, well within the contract's 2 s.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await Promise.all(
      hidden.map(({ Key, gsi4pk, gsi4sk }) =>
        client.send(
          new UpdateCommand({
            TableName: table,
            Key,
            UpdateExpression: 'SET gsi4pk = :pk, gsi4sk = :sk',
            ExpressionAttributeValues: { ':pk': gsi4pk, ':sk': gsi4sk },
          }),
        ),
      ),
    );
    const merged = await merging;

    expect(merged.status, merged.text).toBe(200);
    expect(merged.body.conversationCount).toBe(3);
    for (const { id } of theirs) {
      const moved = await call<Conversation>('GET', `/api/conversations/${id}`, { token: tenant.apiKey });
      expect(moved.body.visitorId).toBe(target.visitor.id);
    }
    expect(await conversationIdsOf(target.visitor.id)).toEqual([mine.id, ...theirs.map((c) => c.id)].sort());
    expect(await conversationIdsOf(source.visitor.id)).toEqual([]);
  }, 30_000);
});
