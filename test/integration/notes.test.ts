import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { toDomainEvent } from '../../shared/db/events';
import { keys } from '../../shared/db/keys';
import {
  type ApiResponse,
  call,
  createApiKey,
  createTenant,
  createVisitor,
  type Tenant,
} from '../helpers/api';

/** Internal notes: operators and API keys only, author-owned deletes for sessions, never visitors. */
type Note = {
  id: string;
  conversationId: string;
  authorId: string;
  authorName: string;
  content: string;
  mentions: string[];
  createdAt: string;
  updatedAt: string;
};
type NoteList = { data: Note[] };

const errorOf = (response: ApiResponse<unknown>) =>
  (response.body as { error: { code: string; details?: Record<string, unknown> } }).error;

let tenant: Tenant;
let visitor: { token: string; visitor: { id: string } };

beforeAll(async () => {
  tenant = await createTenant();
  visitor = await createVisitor(tenant.widgetKey);
});

/** A fresh conversation of the tenant's visitor, with one visitor message. */
async function newConversation(): Promise<string> {
  const created = await call<{ id: string }>('POST', '/api/conversations', {
    token: visitor.token,
    body: { message: 'Hello, I need help' },
  });
  expect(created.status).toBe(201);
  return created.body.id;
}

const notesPath = (conversationId: string, noteId?: string) =>
  `/api/conversations/${conversationId}/notes${noteId ? `/${noteId}` : ''}`;
const write = (conversationId: string, token: string, body: Record<string, unknown>) =>
  call<Note>('POST', notesPath(conversationId), { token, body });
const list = (conversationId: string, token = tenant.apiKey) =>
  call<NoteList>('GET', notesPath(conversationId), { token });
const remove = (conversationId: string, noteId: string, token: string) =>
  call<{ success: boolean }>('DELETE', notesPath(conversationId, noteId), { token });
const listedIds = async (conversationId: string) =>
  (await list(conversationId)).body.data.map((note) => note.id);

/** Writes a note and insists it worked, for tests about something else. */
async function noteBy(conversationId: string, token: string, content = 'A note'): Promise<Note> {
  const written = await write(conversationId, token, { content });
  expect(written.status, written.text).toBe(201);
  return written.body;
}

/** Items of one partition, read straight from the table (events, audit entries, realtime notices). */
async function partition(pk: string, prefix: string): Promise<Record<string, unknown>[]> {
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: inject('endpoints').dynamodb,
      region: process.env.AWS_REGION ?? 'us-east-1',
    }),
  );
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new QueryCommand({
        TableName: inject('tableName'),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix },
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** The organization's events, from every shard partition of them. */
async function storedEvents(orgId: string): Promise<Record<string, unknown>[]> {
  const shards = await Promise.all(keys.eventsPartitions(orgId).map((pk) => partition(pk, keys.eventPrefix)));
  return shards.flat();
}

describe('writing and listing notes', () => {
  it('takes the author from the credential and lists newest first with names and mentions', async () => {
    const conversationId = await newConversation();
    const key = await createApiKey(tenant.orgId, ['conversations:read', 'conversations:write']);

    const byOperator = await write(conversationId, tenant.operatorSession, {
      content: '  VIP customer, be gentle  ',
      mentions: [tenant.adminOperatorId],
    });
    expect(byOperator.status, byOperator.text).toBe(201);
    expect(byOperator.body).toMatchObject({
      conversationId,
      authorId: tenant.operatorId,
      authorName: 'operator one',
      content: 'VIP customer, be gentle',
      mentions: [tenant.adminOperatorId],
    });
    expect(byOperator.body.updatedAt).toBe(byOperator.body.createdAt);
    expect(Object.keys(byOperator.body).sort()).toEqual(
      [
        'authorId',
        'authorName',
        'content',
        'conversationId',
        'createdAt',
        'id',
        'mentions',
        'updatedAt',
      ].sort(),
    );

    const byKey = await write(conversationId, key.key, { content: 'Refund approved' });
    expect(byKey.status, byKey.text).toBe(201);
    expect(byKey.body).toMatchObject({ authorId: key.id, authorName: 'scoped', mentions: [] });

    const byAdmin = await write(conversationId, tenant.adminSession, {
      content: 'Escalated',
      mentions: [tenant.operatorId, tenant.operatorId, tenant.adminOperatorId],
    });
    expect(byAdmin.status, byAdmin.text).toBe(201);
    expect(byAdmin.body).toMatchObject({
      authorId: tenant.adminOperatorId,
      authorName: 'admin one',
      mentions: [tenant.operatorId, tenant.adminOperatorId],
    });

    for (const token of [tenant.apiKey, tenant.operatorSession, tenant.adminSession]) {
      const listed = await list(conversationId, token);
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual({ data: [byAdmin.body, byKey.body, byOperator.body] });
    }

    const [event] = (await storedEvents(tenant.orgId))
      .map(toDomainEvent)
      .filter((item) => item.type === 'note.created' && (item.data as Note).id === byOperator.body.id);
    expect(event?.data).toEqual(byOperator.body);
  });

  it('refuses mentions that are not operators of this organization (422, nothing written)', async () => {
    const conversationId = await newConversation();
    const other = await createTenant();
    const unknown = await write(conversationId, tenant.operatorSession, {
      content: 'x',
      mentions: [tenant.adminOperatorId, crypto.randomUUID()],
    });
    expect(unknown.status).toBe(422);
    expect(errorOf(unknown).details?.field).toBe('mentions.1');
    const foreign = await write(conversationId, tenant.apiKey, {
      content: 'x',
      mentions: [other.operatorId],
    });
    expect(errorOf(foreign).details?.field).toBe('mentions.0');
    // Duplicates are checked once, and the error names the offending entry's own index.
    const afterDuplicates = await write(conversationId, tenant.apiKey, {
      content: 'x',
      mentions: [tenant.operatorId, tenant.operatorId, crypto.randomUUID()],
    });
    expect(errorOf(afterDuplicates).details?.field).toBe('mentions.2');
    const tooMany = await write(conversationId, tenant.apiKey, {
      content: 'x',
      mentions: Array.from({ length: 21 }, () => tenant.operatorId),
    });
    expect(tooMany.status).toBe(422);
    const notUuid = await write(conversationId, tenant.apiKey, { content: 'x', mentions: ['nobody'] });
    expect(notUuid.status).toBe(422);
    const massAssignment = await write(conversationId, tenant.apiKey, {
      content: 'x',
      authorId: tenant.adminOperatorId,
    });
    expect(massAssignment.status).toBe(422);
    expect(errorOf(massAssignment).details?.field).toBe('authorId');
    expect(await listedIds(conversationId)).toEqual([]);
  });

  it('sanitizes content to text and refuses notes that are empty once sanitized', async () => {
    const conversationId = await newConversation();
    const sanitized = await write(conversationId, tenant.operatorSession, {
      content: 'Call <script>alert(1)</script><a href="javascript:x" onclick="y">back</a> later',
    });
    expect(sanitized.status).toBe(201);
    expect(sanitized.body.content).toBe('Call back later');
    const emptied = await write(conversationId, tenant.operatorSession, {
      content: '<iframe src="x"></iframe>',
    });
    expect(emptied.status).toBe(422);
    expect(errorOf(emptied).details?.field).toBe('content');
    const blank = await write(conversationId, tenant.operatorSession, { content: '   ' });
    expect(errorOf(blank).details?.field).toBe('content');
    const tooLong = await write(conversationId, tenant.operatorSession, { content: 'a'.repeat(10_001) });
    expect(errorOf(tooLong).details?.field).toBe('content');
    expect(await listedIds(conversationId)).toEqual([sanitized.body.id]);
  });

  it('lists at most 200 notes, newest first', async () => {
    // Its own tenant and key: 201 writes stay clear of the other tests' rate windows and events.
    const own = await createTenant();
    const ownVisitor = await createVisitor(own.widgetKey);
    const conversation = await call<{ id: string }>('POST', '/api/conversations', {
      token: own.apiKey,
      body: { visitorId: ownVisitor.visitor.id },
    });
    const batches: string[][] = [];
    for (let start = 0; start < 201; start += 20) {
      const size = Math.min(20, 201 - start);
      const written = await Promise.all(
        Array.from({ length: size }, (_, i) =>
          write(conversation.body.id, own.apiKey, { content: `note ${start + i}` }),
        ),
      );
      for (const response of written) expect(response.status, response.text).toBe(201);
      batches.push(written.map((response) => response.body.id));
    }
    const all = batches.flat();
    const listed = await list(conversation.body.id, own.operatorSession);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(200);
    const ids = listed.body.data.map((note) => note.id);
    expect(ids).toEqual([...all].sort().reverse().slice(0, 200));
    // The last note written comes first; the one left out was written in the first batch.
    expect(ids[0]).toBe(batches.at(-1)?.[0]);
    const missing = all.filter((id) => !ids.includes(id));
    expect(missing).toHaveLength(1);
    expect(batches[0]).toContain(missing[0]);
    const times = listed.body.data.map((note) => note.createdAt);
    expect(times).toEqual([...times].sort().reverse());
  }, 20_000);
});

describe('deleting notes', () => {
  it('lets the author delete once, then 404', async () => {
    const conversationId = await newConversation();
    const note = await noteBy(conversationId, tenant.operatorSession);
    const kept = await noteBy(conversationId, tenant.operatorSession, 'Keep me');
    const deleted = await remove(conversationId, note.id, tenant.operatorSession);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ success: true });
    expect(await listedIds(conversationId)).toEqual([kept.id]);
    const again = await remove(conversationId, note.id, tenant.operatorSession);
    expect(again.status).toBe(404);
    expect(errorOf(again).code).toBe('NOT_FOUND');
    expect((await remove(conversationId, crypto.randomUUID(), tenant.operatorSession)).status).toBe(404);
    expect((await remove(conversationId, note.id, tenant.apiKey)).status).toBe(404);

    const audit = await partition(
      keys.conversationPartition(tenant.orgId, conversationId),
      keys.conversationAuditPrefix('NOTE'),
    );
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      entity: 'audit',
      type: 'note.deleted',
      noteId: note.id,
      actor: { type: 'operator', id: tenant.operatorId },
    });
    const events = (await storedEvents(tenant.orgId))
      .map(toDomainEvent)
      .filter((item) => item.type === 'note.deleted' && (item.data as { id: string }).id === note.id);
    expect(events).toHaveLength(1);
    expect(events[0]?.data).toMatchObject({
      id: note.id,
      conversationId,
      deletedBy: { type: 'operator', id: tenant.operatorId },
      deletedAt: audit[0]?.at,
    });
    const stored = (
      await Promise.all(keys.realtimePartitions(tenant.orgId).map((pk) => partition(pk, keys.realtimePrefix)))
    ).flat();
    const notices = stored.filter((item) => (item.payload as { noteId?: string }).noteId === note.id);
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({
      type: 'note_invalidated',
      audience: 'operators',
      conversationId,
      payload: { conversationId, noteId: note.id },
    });
  });

  it('refuses operator sessions, admins included, that are not the author (403)', async () => {
    const conversationId = await newConversation();
    const byOperator = await noteBy(conversationId, tenant.operatorSession);
    const byAdmin = await noteBy(conversationId, tenant.adminSession);
    const byKey = await noteBy(conversationId, tenant.apiKey);
    const refusals = [
      await remove(conversationId, byAdmin.id, tenant.operatorSession),
      await remove(conversationId, byKey.id, tenant.operatorSession),
      await remove(conversationId, byOperator.id, tenant.adminSession),
      await remove(conversationId, byKey.id, tenant.adminSession),
    ];
    for (const refused of refusals) {
      expect(refused.status, refused.text).toBe(403);
      expect(errorOf(refused).code).toBe('FORBIDDEN');
    }
    expect((await listedIds(conversationId)).sort()).toEqual([byOperator.id, byAdmin.id, byKey.id].sort());
    expect((await remove(conversationId, byAdmin.id, tenant.adminSession)).status).toBe(200);
  });

  it('lets an API key delete any note of the conversation', async () => {
    const conversationId = await newConversation();
    const byOperator = await noteBy(conversationId, tenant.operatorSession);
    const byAdmin = await noteBy(conversationId, tenant.adminSession);
    const scoped = await createApiKey(tenant.orgId, ['conversations:write']);
    expect((await remove(conversationId, byOperator.id, tenant.apiKey)).body).toEqual({ success: true });
    expect((await remove(conversationId, byAdmin.id, scoped.key)).body).toEqual({ success: true });
    expect(await listedIds(conversationId)).toEqual([]);
  });

  it('finds only notes of the path conversation in the caller organization (404)', async () => {
    const conversationId = await newConversation();
    const sibling = await newConversation();
    const note = await noteBy(conversationId, tenant.operatorSession);
    // Same organization, another conversation: not there, even for the author.
    expect((await remove(sibling, note.id, tenant.apiKey)).status).toBe(404);
    expect((await remove(sibling, note.id, tenant.operatorSession)).status).toBe(404);

    const other = await createTenant();
    for (const token of [other.apiKey, other.adminSession, other.operatorSession]) {
      expect((await list(conversationId, token)).status).toBe(404);
      expect((await write(conversationId, token, { content: 'intruder' })).status).toBe(404);
      expect((await remove(conversationId, note.id, token)).status).toBe(404);
    }
    const otherVisitor = await createVisitor(other.widgetKey);
    const otherConversation = await call<{ id: string }>('POST', '/api/conversations', {
      token: other.apiKey,
      body: { visitorId: otherVisitor.visitor.id },
    });
    expect((await remove(otherConversation.body.id, note.id, other.apiKey)).status).toBe(404);
    expect((await list(otherConversation.body.id, other.apiKey)).body).toEqual({ data: [] });

    expect(await listedIds(conversationId)).toEqual([note.id]);
    expect((await list(crypto.randomUUID())).status).toBe(404);
  });
});

describe('visitors', () => {
  it('can neither list, write nor delete notes (403) and never see them among messages', async () => {
    const conversationId = await newConversation();
    const note = await noteBy(conversationId, tenant.operatorSession, 'Secret: customer is a reseller');
    const listed = await list(conversationId, visitor.token);
    expect(listed.status).toBe(403);
    expect(listed.text).not.toContain(note.content);
    expect((await write(conversationId, visitor.token, { content: 'me too' })).status).toBe(403);
    expect((await remove(conversationId, note.id, visitor.token)).status).toBe(403);

    const messages = await call<{ data: { id: string; content: string }[] }>(
      'GET',
      `/api/conversations/${conversationId}/messages`,
      { token: visitor.token },
    );
    expect(messages.status).toBe(200);
    expect(messages.body.data.map((message) => message.content)).toEqual(['Hello, I need help']);
    expect(messages.text).not.toContain(note.id);
    expect(messages.text).not.toContain('reseller');
    const asMessage = await call('GET', `/api/conversations/${conversationId}/messages/${note.id}`, {
      token: visitor.token,
    });
    expect(asMessage.status).toBe(404);
    expect(await listedIds(conversationId)).toEqual([note.id]);
  });
});
