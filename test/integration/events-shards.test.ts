import { deflateRawSync } from 'node:zlib';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { keys } from '../../shared/db/keys';
import { EVENT_SHARDS, shardOf } from '../../shared/db/shards';
import { uuidv7 } from '../../shared/ids';
import { call, createTenant, createVisitor } from '../helpers/api';
import { eventually } from '../helpers/eventually';

/**
 * The organization's events lie in EVENT_SHARDS partitions (`ORG#o#EVENTS#<n>`, by event id), and
 * the feed merges them: a client paging with a small `limit`, filtered or not, still sees each
 * event once, in id order, whichever shard holds it.
 */

type Event = { id: string; type: string; organizationId: string };
type Page = { data: Event[]; nextCursor: string | null; done: boolean };
type Feed = typeof import('../../shared/db/event-feed');
type Cursor = typeof import('../../shared/db/cursor');

let table: DynamoDBDocumentClient;
let feed: Feed['feed'];
let encodeCursor: Cursor['encodeCursor'];

beforeAll(async () => {
  table = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: inject('endpoints').dynamodb,
      region: process.env.AWS_REGION ?? 'us-east-1',
      maxAttempts: 10,
    }),
  );
  // The data layer reads its table, endpoint and cursor key at import: the shared stack's.
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: inject('endpoints').dynamodb,
    TABLE_NAME: inject('tableName'),
    ...(inject('cursorSigningKey') ? { CURSOR_SIGNING_KEY: inject('cursorSigningKey') } : {}),
  });
  ({ feed } = await import('../../shared/db/event-feed'));
  ({ encodeCursor } = await import('../../shared/db/cursor'));
});

afterAll(() => table.destroy());

/** Every stored event of the organization, shard by shard, straight from the table. */
async function storedByShard(orgId: string): Promise<Map<string, Record<string, unknown>[]>> {
  const shards = new Map<string, Record<string, unknown>[]>();
  for (const pk of keys.eventsPartitions(orgId)) {
    const items: Record<string, unknown>[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await table.send(
        new QueryCommand({
          TableName: inject('tableName'),
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': pk, ':prefix': keys.eventPrefix },
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    shards.set(pk, items);
  }
  return shards;
}

/** Follows `nextCursor` through the API until the feed says `done`. */
async function readApi(token: string, query: string): Promise<{ events: Event[]; pages: number }> {
  const events: Event[] = [];
  let cursor: string | null = null;
  for (let pages = 1; pages <= 200; pages++) {
    const page: { status: number; body: Page } = await call<Page>(
      'GET',
      `/api/events?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { token },
    );
    expect(page.status).toBe(200);
    events.push(...page.body.data);
    cursor = page.body.nextCursor;
    if (page.body.done) return { events, pages };
  }
  throw new Error('the feed never said done');
}

/** Follows `nextCursor` through `feed` itself until it says `done`. */
async function readFeed(
  orgId: string,
  query: { limit: number; types?: Parameters<Feed['feed']>[1]['types']; cursor?: string },
): Promise<{ ids: string[]; pages: Page[] }> {
  const ids: string[] = [];
  const pages: Page[] = [];
  let cursor = query.cursor;
  for (let i = 0; i < 1_000; i++) {
    const page = await feed(orgId, { ...query, cursor });
    pages.push(page);
    ids.push(...page.data.map((event) => event.id));
    if (page.done) return { ids, pages };
    expect(page.nextCursor).toEqual(expect.any(String));
    cursor = page.nextCursor ?? undefined;
  }
  throw new Error('the feed never said done');
}

describe('the events of one organization over several partitions', () => {
  it('writes each event to the shard of its id and serves them all once, in id order, two a page', async () => {
    const tenant = await createTenant();
    const visitor = await createVisitor(tenant.widgetKey);
    const conversations: string[] = [];
    for (const message of ['one', 'two', 'three', 'four']) {
      const created = await call<{ id: string }>('POST', '/api/conversations', {
        token: visitor.token,
        body: { message },
      });
      expect(created.status).toBe(201);
      conversations.push(created.body.id);
    }
    for (const content of ['five', 'six', 'seven']) {
      const posted = await call('POST', `/api/conversations/${conversations[0]}/messages`, {
        token: visitor.token,
        body: { content },
      });
      expect(posted.status).toBe(201);
    }
    // visitor.created, four conversation.created and their first message.created, three more.
    const stored = await storedByShard(tenant.orgId);
    const items = [...stored.values()].flat();
    expect(items).toHaveLength(12);
    for (const [pk, shardItems] of stored)
      for (const item of shardItems) {
        expect(pk).toBe(`ORG#${tenant.orgId}#EVENTS#${shardOf(String(item.id), EVENT_SHARDS)}`);
        expect(item).toMatchObject(keys.event(tenant.orgId, String(item.id)));
      }
    expect([...stored.values()].filter((shardItems) => shardItems.length > 0).length).toBeGreaterThan(1);
    const expected = items.map((item) => String(item.id)).sort();

    const paged = await eventually(
      () => readApi(tenant.apiKey, 'limit=2'),
      (read) => read.events.length >= expected.length,
      { timeoutMs: 10_000, intervalMs: 250 },
    );
    expect(paged.events.map((event) => event.id)).toEqual(expected);
    expect(paged.pages).toBeGreaterThanOrEqual(6);
    expect(paged.events.every((event) => event.organizationId === tenant.orgId)).toBe(true);

    const messages = items.filter((item) => item.type === 'message.created').map((item) => String(item.id));
    expect(messages).toHaveLength(7);
    const filtered = await readApi(tenant.apiKey, 'limit=2&types=message.created');
    expect(filtered.events.map((event) => event.id)).toEqual(messages.sort());
    expect(new Set(filtered.events.map((event) => event.type))).toEqual(new Set(['message.created']));
  });

  describe('a long feed, seeded', () => {
    const orgId = uuidv7();
    const ids: string[] = [];
    const notes: string[] = [];
    // Notes at both ends only, ~600 messages apart: more than a filtered page may read of each shard
    // (MAX_FEED_ROUNDS Queries), so pages come back short of the limit until the next note.
    const noteAt = new Set([0, 1, 2, 598, 599]);

    beforeAll(async () => {
      const startMs = Date.now() - 30 * 60_000;
      const items = Array.from({ length: 600 }, (_, i) => {
        const id = uuidv7(startMs + i * 10);
        const type = noteAt.has(i) ? 'note.created' : 'message.created';
        ids.push(id);
        if (type === 'note.created') notes.push(id);
        return {
          ...keys.event(orgId, id),
          entity: 'event',
          id,
          type,
          timestamp: new Date(startMs + i * 10).toISOString(),
          organizationId: orgId,
          dataZ: deflateRawSync(JSON.stringify({ id: uuidv7(), content: `message ${i}` })),
          expiresAt: Math.floor(Date.now() / 1000) + 86_400,
        };
      });
      for (let i = 0; i < items.length; i += 25) {
        let pending: { PutRequest: { Item: Record<string, unknown> } }[] = items
          .slice(i, i + 25)
          .map((Item) => ({ PutRequest: { Item } }));
        await eventually(
          async () => {
            const written = await table.send(
              new BatchWriteCommand({ RequestItems: { [inject('tableName')]: pending } }),
            );
            pending = (written.UnprocessedItems?.[inject('tableName')] ?? []) as typeof pending;
            return pending.length;
          },
          (left) => left === 0,
        );
        expect(pending).toEqual([]);
      }
    }, 60_000);

    it('spreads the events over every shard', async () => {
      const stored = await storedByShard(orgId);
      expect([...stored.values()].map((items) => items.length).reduce((a, b) => a + b)).toBe(600);
      for (const items of stored.values()) expect(items.length).toBeGreaterThan(100);
    });

    it('serves every event once in id order, a small page or a large one', async () => {
      for (const limit of [2, 7, 100]) {
        const read = await readFeed(orgId, { limit });
        expect(read.ids).toEqual(ids);
        expect(read.pages.slice(0, -1).every((page) => page.data.length === limit)).toBe(true);
      }
    });

    it('serves a rare type once each, in order, across pages that find none', async () => {
      const read = await readFeed(orgId, { limit: 2, types: ['note.created'] });
      expect(read.ids).toEqual(notes);
      expect(read.pages.some((page) => !page.done && page.data.length < 2)).toBe(true);
      expect(read.pages.flatMap((page) => page.data.map((event) => event.type))).toEqual(
        notes.map(() => 'note.created'),
      );
    });

    it('keeps a caught-up cursor usable, and resumes a cursor of the single-partition feed', async () => {
      const read = await readFeed(orgId, { limit: 100 });
      const last = read.pages.at(-1);
      expect(last?.nextCursor).toEqual(expect.any(String));
      const again = await feed(orgId, { limit: 100, cursor: last?.nextCursor ?? undefined });
      expect(again).toMatchObject({ data: [], done: true, nextCursor: expect.any(String) });

      const legacy = encodeCursor(orgId, 'events:', {
        pk: `ORG#${orgId}#EVENTS`,
        sk: `${keys.eventPrefix}${ids[99]}`,
      });
      const resumed = await feed(orgId, { limit: 5, cursor: legacy });
      expect(resumed.data.map((event) => event.id)).toEqual(ids.slice(100, 105));
      expect(resumed.done).toBe(false);
    });
  });
});
