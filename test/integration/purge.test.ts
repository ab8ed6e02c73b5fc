import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { lambdaContext } from '../../infra/local/lambda-event';
import { keys } from '../../shared/db/keys';
import { call, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { eventually } from '../helpers/eventually';
import { useInProcessStack } from '../helpers/in-process-stack';
import { crashOnNth, runHurried, sqsRecord } from '../helpers/worker-faults';

/**
 * The purge of a soft-deleted conversation leaves none of its text in the table: messages are
 * emptied, revisions (prior texts of edited messages) and notes deleted, snooze reasons, the
 * follow-up note, the title and the last-message preview cleared. Read straight from the table,
 * since the API hides a deleted conversation entirely.
 */
useInProcessStack();

type Item = Record<string, unknown>;
type Conversation = { id: string; lastMessage: { id: string } | null };

let tenant: Tenant;
let visitorToken: string;
let client: DynamoDBDocumentClient;

beforeAll(async () => {
  tenant = await createTenant();
  visitorToken = (await createVisitor(tenant.widgetKey)).token;
  client = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: inject('endpoints').dynamodb }));
});

afterAll(() => client.destroy());

/** Every item of the conversation's partition, whatever its kind. */
async function partition(conversationId: string): Promise<Item[]> {
  const items: Item[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new QueryCommand({
        TableName: inject('tableName'),
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.conversationPartition(tenant.orgId, conversationId) },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

const kindOf = (item: Item): string => String(item.sk).split('#')[0] ?? '';
/** Whether any attribute of any item still holds a text that carries `marker`. */
const holdsText = (items: Item[], marker: string) => JSON.stringify(items).includes(marker);

async function ok<T>(response: Promise<{ status: number; body: T; text: string }>, status = 200): Promise<T> {
  const answer = await response;
  if (answer.status !== status) throw new Error(`expected ${status}, got ${answer.status} ${answer.text}`);
  return answer.body;
}

/**
 * A conversation whose every kind of text carries `marker`: messages (one edited twice, so it has
 * revisions), a note, a snooze reason, a follow-up note and a survey comment. Its title defaults to the first message.
 */
async function conversationFullOfText(marker: string): Promise<{ id: string; editedId: string }> {
  const created = await ok(
    call<Conversation>('POST', '/api/conversations', {
      token: visitorToken,
      body: { message: `${marker} my order is late` },
    }),
    201,
  );
  const editedId = created.lastMessage?.id ?? '';
  for (const content of [`${marker} order 1234`, `${marker} my address is 1 Main St`]) {
    await ok(
      call('POST', `/api/conversations/${created.id}/messages`, { token: visitorToken, body: { content } }),
      201,
    );
  }
  for (const content of [`${marker} my order is very late`, `${marker} my order is lost`]) {
    await ok(
      call('PATCH', `/api/conversations/${created.id}/messages/${editedId}`, {
        token: visitorToken,
        body: { content },
      }),
    );
  }
  const revisions = await ok(
    call<{ edits: unknown[] }>('GET', `/api/conversations/${created.id}/messages/${editedId}/revisions`, {
      token: tenant.apiKey,
    }),
  );
  expect(revisions.edits).toHaveLength(2);
  await ok(
    call('POST', `/api/conversations/${created.id}/notes`, {
      token: tenant.apiKey,
      body: { content: `${marker} refund approved` },
    }),
    201,
  );
  const later = new Date(Date.now() + 86_400_000).toISOString();
  await ok(
    call('POST', `/api/conversations/${created.id}/snooze`, {
      token: tenant.apiKey,
      body: { until: later, reason: `${marker} waiting for the courier` },
    }),
  );
  await ok(
    call('PUT', `/api/conversations/${created.id}/follow-up`, {
      token: tenant.apiKey,
      body: { remindAt: later, note: `${marker} call them back` },
    }),
  );
  await ok(
    call('POST', '/api/surveys', {
      token: visitorToken,
      body: { conversationId: created.id, score: 2, comment: `${marker} the courier was rude` },
    }),
    201,
  );
  return { id: created.id, editedId };
}

describe('the purge of a deleted conversation', () => {
  it('leaves no message, revision, note or other text of it in the table', async () => {
    const marker = `text-${crypto.randomUUID()}`;
    const { id } = await conversationFullOfText(marker);
    const before = await partition(id);
    expect(before.filter((item) => kindOf(item) === 'REV')).toHaveLength(2);
    expect(before.filter((item) => kindOf(item) === 'NOTE')).toHaveLength(1);

    // Soft delete → stream → stream-router (part conversation-changes) → queue → conversation-purge.
    await ok(
      call('POST', '/api/conversations/bulk-delete', {
        token: tenant.apiKey,
        body: { conversationIds: [id] },
      }),
    );
    const after = await eventually(
      () => partition(id),
      (items) => !holdsText(items, marker),
      { timeoutMs: 20_000 },
    );

    expect(holdsText(after, marker)).toBe(false);
    expect(after.filter((item) => ['REV', 'NOTE'].includes(kindOf(item)))).toEqual([]);
    const messages = after.filter((item) => kindOf(item) === 'MSG');
    expect(messages).toHaveLength(3);
    for (const message of messages) {
      expect(message).toMatchObject({ content: '', searchVector: '', deletedAt: expect.any(String) });
    }
    const conversation = after.find((item) => item.sk === 'CONVERSATION');
    expect(conversation).toMatchObject({
      deletedAt: expect.any(String),
      title: '',
      lastMessage: { content: '' },
      messageCount: 3,
    });
    expect(conversation?.metadata).toMatchObject({ followUpNote: null });
    // The audit trail stays, without the texts it carried.
    const audit = after.filter((item) => kindOf(item) === 'AUDIT');
    expect(audit.map((item) => item.type).sort()).toEqual(['conversation.deleted', 'snoozed']);
    expect(audit.find((item) => item.type === 'snoozed')?.reason).toBeNull();
    // The survey response stays (its score left CSAT with the deletion), without its comment.
    expect(after.filter((item) => kindOf(item) === 'SURVEY')).toMatchObject([{ score: 2, comment: null }]);
    expect([...new Set(after.map(kindOf))].sort()).toEqual(['AUDIT', 'CONVERSATION', 'MSG', 'SURVEY']);
  });

  it('resumes from every hand-over and after a crash, and a repeated run changes nothing', async () => {
    const marker = `text-${crypto.randomUUID()}`;
    const { id, editedId } = await conversationFullOfText(marker);
    const table = inject('tableName');
    const conversationKey = keys.conversation(tenant.orgId, id);

    // Soft-delete it behind the stream's back: a Delete and a Put are no MODIFY, so no purge job is
    // sent and only the calls below purge it.
    const stored = (
      await client.send(new GetCommand({ TableName: table, Key: conversationKey, ConsistentRead: true }))
    ).Item as Item;
    const { gsi1pk, gsi1sk, gsi2pk, gsi2sk, gsi3pk, gsi3sk, gsi4pk, gsi4sk, ...unlisted } = stored;
    await client.send(new DeleteCommand({ TableName: table, Key: conversationKey }));
    await client.send(
      new PutCommand({
        TableName: table,
        Item: { ...unlisted, deletedAt: new Date().toISOString(), rev: Number(stored.rev) + 1 },
      }),
    );
    // More revisions than two purge pages: twelve more messages' full rings of 20. The crash below
    // may still delete most of the first page (its other batch calls complete), so more than two
    // pages' worth keeps a second revision page certain after the redelivery.
    const rings = Array.from({ length: 12 }, () => crypto.randomUUID()).flatMap((messageId) =>
      Array.from({ length: 20 }, (_, slot) => ({
        ...keys.revision(tenant.orgId, id, messageId, slot),
        entity: 'revision',
        messageId,
        content: `${marker} prior text ${slot}`,
        editedAt: new Date().toISOString(),
      })),
    );
    for (let i = 0; i < rings.length; i += 25) {
      await client.send(
        new BatchWriteCommand({
          RequestItems: { [table]: rings.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) },
        }),
      );
    }
    expect((await partition(id)).filter((item) => kindOf(item) === 'REV')).toHaveLength(242);

    const { handler } = await import('../../functions/workers/conversation-purge');
    const { queues } = await import('../../shared/queues');
    const { db } = await import('../../shared/db/client');
    const { logger } = await import('../../shared/logger');
    const handedOver: { after?: string }[] = [];
    const send = vi.spyOn(queues, 'send').mockImplementation(async (_queue, body) => {
      handedOver.push(body as { after?: string });
    });
    // The first batch of revision deletes dies, as a worker would mid-step; its error log is expected.
    const crash = crashOnNth(db, BatchWriteCommand, 1);
    const quiet = vi.spyOn(logger, 'error').mockImplementation(() => undefined);
    try {
      // A worker with no time left does one step, then hands the rest back to the queue.
      const { failures } = await runHurried({
        handler,
        queue: 'conversation-purge',
        functionName: 'purge',
        job: { orgId: tenant.orgId, conversationId: id },
        handedOver,
        maxSteps: 20,
      });
      expect(failures).toBe(1);
      // Messages first, then revisions (two pages at least), notes, snooze reasons, survey comments,
      // the conversation.
      const cursors = handedOver.map((body) => body.after ?? '');
      const phases = cursors.map(
        (after) =>
          ['MSG#', 'REV#', 'NOTE#', 'AUDIT#SNOOZE#', 'SURVEY#'].find((prefix) => after.startsWith(prefix)) ??
          after,
      );
      expect(phases.filter((phase, i) => phase !== phases[i - 1])).toEqual([
        'REV#',
        'NOTE#',
        'AUDIT#SNOOZE#',
        'SURVEY#',
        'CONVERSATION',
      ]);
      expect(phases.filter((phase) => phase === 'REV#').length).toBeGreaterThan(1);
      expect(
        handedOver.every((body) => Object.keys(body).sort().join() === 'after,conversationId,orgId'),
      ).toBe(true);

      const purged = await partition(id);
      expect(holdsText(purged, marker)).toBe(false);
      expect([...new Set(purged.map(kindOf))].sort()).toEqual(['AUDIT', 'CONVERSATION', 'MSG', 'SURVEY']);
      expect(purged.find((item) => item.sk === keys.message(tenant.orgId, id, editedId).sk)).toMatchObject({
        content: '',
      });

      // The whole job again, from the start and with time to spare: it finds nothing left to do.
      const again = await handler(
        { Records: [sqsRecord('conversation-purge', { orgId: tenant.orgId, conversationId: id })] },
        lambdaContext('purge'),
      );
      expect(again.batchItemFailures).toEqual([]);
      expect(await partition(id)).toEqual(purged);
    } finally {
      quiet.mockRestore();
      crash.mockRestore();
      send.mockRestore();
    }
  });
});
