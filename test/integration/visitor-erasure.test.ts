import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { keys } from '../../shared/db/keys';
import { call, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { eventually } from '../helpers/eventually';
import { useInProcessStack } from '../helpers/in-process-stack';
import { png, readyUpload, uploadsBucket } from '../helpers/uploads';
import { crashOnNth, runHurried } from '../helpers/worker-faults';

/**
 * DELETE /api/visitors/{id}: the erasure (GDPR). The profile is cleared at once; the stream hands
 * the rest to the visitor-jobs worker: message texts blanked, uploads deleted, conversations
 * anonymized, resumable after a crash.
 */
useInProcessStack();

interface Profile {
  id: string;
  identifier: string;
  fingerprint: string | null;
  geoCountry: string | null;
  geoCity: string | null;
  name: string | null;
  email: string | null;
  phone: string | null;
  externalId: string | null;
  metadata: Record<string, unknown>;
  conversationCount: number;
  erasedAt: string | null;
  version: number;
}
interface Message {
  id: string;
  senderType: string;
  content: string;
  attachments?: { id: string }[];
}
interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

let tenant: Tenant;
let other: Tenant;
let client: DynamoDBDocumentClient;
const bucket = uploadsBucket();
const storedFor = bucket.storedFor;

beforeAll(async () => {
  [tenant, other] = await Promise.all([createTenant(), createTenant()]);
  client = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: inject('endpoints').dynamodb }));
});

afterAll(() => {
  client.destroy();
  bucket.destroy();
});

/** A ready upload of a small PNG, made by `token`. */
const readyPng = async (token: string) =>
  (await readyUpload(token, png(256), 'image/png', 'passport.png')).id;

/** Every message of the conversation, page by page. */
async function messagesOf(conversationId: string): Promise<Message[]> {
  const messages: Message[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await call<Page<Message>>('GET', `/api/conversations/${conversationId}/messages?${query}`, {
      token: tenant.apiKey,
    });
    expect(page.status, page.text).toBe(200);
    messages.push(...page.body.data);
    cursor = page.body.nextCursor;
  } while (cursor);
  return messages;
}

describe('DELETE /api/visitors/{id}', () => {
  it('clears the profile at once, then blanks their messages and deletes their uploads', async () => {
    const marker = `secret-${crypto.randomUUID()}`;
    const visitor = await createVisitor(tenant.widgetKey, {
      identifier: `${marker}@example.com`,
      fingerprint: 'fp-123',
      metadata: { address: marker },
    });
    const id = visitor.visitor.id;
    const patched = await call('PATCH', `/api/visitors/${id}`, {
      token: tenant.apiKey,
      body: { name: 'Ada', email: 'ada@example.com', phone: '+14155550123', externalId: `crm-${id}` },
    });
    expect(patched.status, patched.text).toBe(200);
    const conversation = await call<{ id: string }>('POST', '/api/conversations', {
      token: visitor.token,
      body: { message: `my card is ${marker}` },
    });
    expect(conversation.status, conversation.text).toBe(201);
    const conversationId = conversation.body.id;
    const attached = await readyPng(visitor.token);
    const loose = await readyPng(visitor.token);
    expect(
      (
        await call('POST', `/api/conversations/${conversationId}/messages`, {
          token: visitor.token,
          body: { content: `see ${marker}`, attachmentIds: [attached] },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await call('POST', `/api/conversations/${conversationId}/messages`, {
          token: tenant.apiKey,
          body: { content: 'Thanks, we will look', operatorId: tenant.operatorId },
        })
      ).status,
    ).toBe(201);
    expect(await storedFor(attached)).toHaveLength(1);

    // Admin access only: a plain operator is refused.
    expect((await call('DELETE', `/api/visitors/${id}`, { token: tenant.operatorSession })).status).toBe(403);
    const accepted = await call('DELETE', `/api/visitors/${id}`, { token: tenant.adminSession });
    expect(accepted.status, accepted.text).toBe(202);
    expect(accepted.body).toEqual({ success: true });

    // At once: the profile, the tokens.
    const got = await call<Profile>('GET', `/api/visitors/${id}`, { token: tenant.apiKey });
    expect(got.body).toMatchObject({
      identifier: '',
      fingerprint: null,
      geoCountry: null,
      geoCity: null,
      name: null,
      email: null,
      phone: null,
      externalId: null,
      metadata: {},
      erasedAt: expect.any(String),
    });
    // Counted through the visitor's listing (an index), which may show a conversation written a
    // moment ago up to 2 s later (the contract's bound for counts read through an index).
    const counted = await eventually(
      () => call<Profile>('GET', `/api/visitors/${id}`, { token: tenant.apiKey }),
      (answer) => answer.body.conversationCount === 1,
      { timeoutMs: 2_000 },
    );
    expect(counted.body.conversationCount).toBe(1);
    expect((await call('GET', `/api/conversations/${conversationId}`, { token: visitor.token })).status).toBe(
      401,
    );
    const byEmail = await call<Page<Profile>>('GET', '/api/visitors?email=ada@example.com', {
      token: tenant.apiKey,
    });
    expect(byEmail.body.data.map((found) => found.id)).not.toContain(id);

    // Within 60 s (here: seconds): their messages blank, the operator's kept, uploads gone.
    const messages = await eventually(
      () => messagesOf(conversationId),
      (page) =>
        page.filter((message) => message.senderType === 'visitor').every((message) => message.content === ''),
      { timeoutMs: 30_000 },
    );
    expect(messages).toHaveLength(3);
    expect(messages.filter((message) => message.senderType === 'visitor').map((m) => m.content)).toEqual([
      '',
      '',
    ]);
    expect(messages.find((message) => message.senderType === 'operator')?.content).toBe(
      'Thanks, we will look',
    );
    await eventually(
      async () => [...(await storedFor(attached)), ...(await storedFor(loose))],
      (objects) => objects.length === 0,
      { timeoutMs: 30_000 },
    );
    for (const upload of [attached, loose])
      expect((await call('GET', `/api/uploads/${upload}`, { token: tenant.apiKey })).status).toBe(404);
    // The conversation stays, anonymized.
    const kept = await eventually(
      () =>
        call<{ title: string; messageCount: number; visitor: Profile }>(
          'GET',
          `/api/conversations/${conversationId}`,
          {
            token: tenant.apiKey,
          },
        ),
      (answer) => answer.body.title === '',
      { timeoutMs: 30_000 },
    );
    expect(kept.body).toMatchObject({ messageCount: 3, visitor: { id, identifier: '', metadata: {} } });
    expect(JSON.stringify(kept.body)).not.toContain(marker);

    // Event and audit entry; the erased visitor syncs with its marker.
    const feed = await eventually(
      async () =>
        (
          await call<Page<{ data: Profile }>>('GET', '/api/events?types=visitor.erased', {
            token: tenant.apiKey,
          })
        ).body.data,
      (events) => events.some((event) => event.data.id === id),
      { timeoutMs: 10_000 },
    );
    expect(feed.find((event) => event.data.id === id)?.data).toMatchObject({
      identifier: '',
      erasedAt: expect.any(String),
    });
    const audit = await call<Page<{ type: string; target: { id: string } }>>(
      'GET',
      '/api/audit-events?type=visitor.erased',
      { token: tenant.adminSession },
    );
    expect(audit.body.data.map((entry) => entry.target.id)).toContain(id);
    const synced = await eventually(
      async () =>
        (
          await call<Page<Profile>>(
            'GET',
            `/api/visitors?updatedSince=${encodeURIComponent(got.body.erasedAt ?? '')}`,
            {
              token: tenant.apiKey,
            },
          )
        ).body.data,
      (data) => data.some((found) => found.id === id),
      { timeoutMs: 10_000 },
    );
    expect(synced.find((found) => found.id === id)?.erasedAt).toBe(got.body.erasedAt);

    // Again: 202, nothing new. Another organization's visitor: 404.
    expect((await call('DELETE', `/api/visitors/${id}`, { token: tenant.apiKey })).status).toBe(202);
    const foreign = await createVisitor(other.widgetKey);
    expect(
      (await call('DELETE', `/api/visitors/${foreign.visitor.id}`, { token: tenant.apiKey })).status,
    ).toBe(404);
  }, 120_000);

  it('resumes after a crash and a repeated run changes nothing', async () => {
    const marker = `crash-${crypto.randomUUID()}`;
    const visitor = await createVisitor(tenant.widgetKey);
    const id = visitor.visitor.id;
    const conversations: string[] = [];
    for (let c = 0; c < 2; c++) {
      const started = await call<{ id: string }>('POST', '/api/conversations', {
        token: visitor.token,
        body: { message: `${marker} opening` },
      });
      conversations.push(started.body.id);
    }
    // More messages than one step's page in the first conversation.
    const first = conversations[0] ?? '';
    for (let i = 0; i < 120; i += 20)
      await Promise.all(
        Array.from({ length: 20 }, (_, j) =>
          call('POST', `/api/conversations/${first}/messages`, {
            token: visitor.token,
            body: { content: `${marker} ${i + j}` },
          }),
        ),
      );

    // Erased behind the stream's back (a Delete and a Put are no MODIFY, so no job is sent).
    const table = inject('tableName');
    const key = keys.visitor(tenant.orgId, id);
    const stored = (await client.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true })))
      .Item as Record<string, unknown>;
    await client.send(new DeleteCommand({ TableName: table, Key: key }));
    await client.send(
      new PutCommand({
        TableName: table,
        Item: {
          ...stored,
          identifier: '',
          erasedAt: new Date().toISOString(),
          rev: Number(stored.rev ?? 1) + 1,
        },
      }),
    );

    const { handler } = await import('../../functions/workers/visitor-jobs');
    const { visitorErasure } = await import('../../shared/db/visitor-erasure');
    const { queues } = await import('../../shared/queues');
    const { db } = await import('../../shared/db/client');
    const { logger } = await import('../../shared/logger');
    const handedOver: { after?: string }[] = [];
    const send = vi.spyOn(queues, 'send').mockImplementation(async (_queue, body) => {
      handedOver.push(body as { after?: string });
    });
    const quiet = vi.spyOn(logger, 'error').mockImplementation(() => undefined);
    const crash = crashOnNth(db, UpdateCommand, 40);
    try {
      const { failures } = await runHurried({
        handler,
        queue: 'visitor-jobs',
        functionName: 'visitor-jobs',
        job: { orgId: tenant.orgId, visitorId: id, kind: 'erase' },
        handedOver,
        maxSteps: 30,
      });
      expect(failures).toBe(1);
      for (const conversationId of conversations) {
        const visitorTexts = (await messagesOf(conversationId))
          .filter((message) => message.senderType === 'visitor')
          .map((message) => message.content);
        expect(new Set(visitorTexts)).toEqual(new Set(['']));
      }
      expect(await messagesOf(first)).toHaveLength(121);
      // A whole run again changes nothing.
      let changed = 0;
      let after: string | undefined;
      do {
        const step = await visitorErasure.eraseStep(tenant.orgId, id, after);
        changed += step.changed;
        after = step.next;
      } while (after);
      expect(changed).toBe(0);
    } finally {
      send.mockRestore();
      crash.mockRestore();
      quiet.mockRestore();
    }
  }, 120_000);

  it('reaches a conversation and a file its listings did not show yet when it started', async () => {
    const marker = `lagging-${crypto.randomUUID()}`;
    const visitor = await createVisitor(tenant.widgetKey);
    const id = visitor.visitor.id;
    const start = async (message: string) => {
      const started = await call<{ id: string }>('POST', '/api/conversations', {
        token: visitor.token,
        body: { message },
      });
      expect(started.status, started.text).toBe(201);
      return started.body.id;
    };
    const listed = await start(`${marker} listed`);
    const unlisted = await start(`${marker} not listed yet`);
    const file = await readyPng(visitor.token);
    // What lagging indexes show right after: neither the conversation in the visitor's listing
    // (gsi4) nor the file in the visitor's uploads (gsi1). They show once the first walk is over.
    const table = inject('tableName');
    const hidden = await Promise.all(
      [
        { Key: keys.conversation(tenant.orgId, unlisted), names: ['gsi4pk', 'gsi4sk'] },
        { Key: keys.upload(tenant.orgId, file), names: ['gsi1pk', 'gsi1sk'] },
      ].map(async ({ Key, names }) => {
        const item = (await client.send(new GetCommand({ TableName: table, Key, ConsistentRead: true })))
          .Item;
        await client.send(
          new UpdateCommand({ TableName: table, Key, UpdateExpression: `REMOVE ${names.join(', ')}` }),
        );
        return { Key, values: Object.fromEntries(names.map((name) => [name, item?.[name]])) };
      }),
    );
    const indexCatchesUp = () =>
      Promise.all(
        hidden.map(({ Key, values }) =>
          client.send(
            new UpdateCommand({
              TableName: table,
              Key,
              UpdateExpression: `SET ${Object.keys(values)
                .map((name) => `${name} = :${name}`)
                .join(', ')}`,
              ExpressionAttributeValues: Object.fromEntries(
                Object.entries(values).map(([name, value]) => [`:${name}`, value]),
              ),
            }),
          ),
        ),
      );
    await eraseWithoutJob(id);

    // The erasure as the worker runs it, step by step. The first walk of the visitor's listings
    // ends where an erasure that looked once would stop: the indexes show the rest from then on.
    const { visitorErasure } = await import('../../shared/db/visitor-erasure');
    const firstWalk = /^(CONV|NEXT|UPLOADS)#/;
    let after: string | undefined;
    let caughtUp = false;
    for (let steps = 0; steps < 50; steps++) {
      after = (await visitorErasure.eraseStep(tenant.orgId, id, after)).next;
      if (!caughtUp && !firstWalk.test(after ?? '')) {
        await indexCatchesUp();
        // Only once an index Query shows them (a layer that lags indexes lags this write too).
        await eventually(
          () =>
            Promise.all([
              indexEntries(keys.conversationListPartition.visitor(tenant.orgId, id)),
              indexEntries(keys.visitorUploadsPartition(tenant.orgId, id)),
            ]),
          ([conversations, uploads]) => conversations.includes(unlisted) && uploads.includes(file),
          { timeoutMs: 10_000 },
        );
        caughtUp = true;
      }
      if (!after) break;
    }
    expect(after).toBeUndefined();

    for (const conversationId of [listed, unlisted]) {
      const visitorTexts = (await messagesOf(conversationId))
        .filter((message) => message.senderType === 'visitor')
        .map((message) => message.content);
      expect(visitorTexts).toEqual(['']);
      const anonymized = await call<{ title: string }>('GET', `/api/conversations/${conversationId}`, {
        token: tenant.apiKey,
      });
      expect(anonymized.body.title).toBe('');
    }
    expect(await storedFor(file)).toEqual([]);
    expect((await call('GET', `/api/uploads/${file}`, { token: tenant.apiKey })).status).toBe(404);
  }, 60_000);
});

/** The sort keys of an index partition's entries (a visitor's conversation ids, upload ids). */
async function indexEntries(partition: { index: 'gsi1' | 'gsi4'; pk: string }): Promise<string[]> {
  const { Items = [] } = await client.send(
    new QueryCommand({
      TableName: inject('tableName'),
      IndexName: partition.index,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': `${partition.index}pk` },
      ExpressionAttributeValues: { ':pk': partition.pk },
    }),
  );
  return Items.map((item) => String(item[`${partition.index}sk`]));
}

/**
 * Marks the visitor erased behind the stream's back (a Delete and a Put are no MODIFY, so no job is
 * sent), as `DELETE /api/visitors/{id}` commits it: the test runs the erasure's steps itself.
 */
async function eraseWithoutJob(visitorId: string): Promise<void> {
  const table = inject('tableName');
  const key = keys.visitor(tenant.orgId, visitorId);
  const stored = (await client.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true })))
    .Item as Record<string, unknown>;
  await client.send(new DeleteCommand({ TableName: table, Key: key }));
  await client.send(
    new PutCommand({
      TableName: table,
      Item: {
        ...stored,
        identifier: '',
        erasedAt: new Date().toISOString(),
        rev: Number(stored.rev ?? 1) + 1,
      },
    }),
  );
}
