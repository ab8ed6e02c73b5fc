import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { clock } from '../../shared/clock';
import { keys } from '../../shared/db/keys';
import { SYNC_SETTLE_MS } from '../../shared/db/sync';
import { uuidv7 } from '../../shared/ids';
import { call, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { eventually } from '../helpers/eventually';
import { useInProcessStack } from '../helpers/in-process-stack';
import { eventuallyIndexed } from '../helpers/indexed';

/**
 * `npm run shards:backfill` (shared/db/shard-backfill.ts): a table deployed before issue 37 holds
 * conversations with unsharded listing and sync keys and events in the single `ORG#o#EVENTS`
 * partition, which the listings, the sync and the events feed no longer read, until the backfill
 * moves them to their shards.
 */
const stackClock = useInProcessStack();

type Item = Record<string, unknown>;
interface Listed {
  id: string;
}
interface Page {
  data: Listed[];
  nextCursor: string | null;
  done?: boolean;
}
type Event = { id: string; type: string };
type EventPage = { data: Event[]; nextCursor: string | null; done: boolean };

let tenant: Tenant;
let client: DynamoDBDocumentClient;
const DAY_MS = 86_400_000;

beforeAll(async () => {
  tenant = await createTenant();
  client = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: inject('endpoints').dynamodb }));
});

afterAll(() => client.destroy());

const table = () => inject('tableName');
const read = async (key: Item) =>
  (await client.send(new GetCommand({ TableName: table(), Key: key, ConsistentRead: true }))).Item;
/** What issue 37 suffixed with `#<n>`, as it was before. */
const unsharded = (key: unknown) => String(key).replace(/#\d+$/, '');
const legacyEvents = (orgId: string) => `ORG#${orgId}#EVENTS`;

const listed = async (query: string) => {
  const page = await call<Page>('GET', `/api/conversations?${query}`, { token: tenant.apiKey });
  expect(page.status, page.text).toBe(200);
  return page.body.data.map((conversation) => conversation.id);
};

/** Every event of the feed through the API, following `nextCursor` until it says `done`. */
async function feedIds(): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const page: { status: number; body: EventPage; text: string } = await call<EventPage>(
      'GET',
      `/api/events?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { token: tenant.apiKey },
    );
    expect(page.status, page.text).toBe(200);
    ids.push(...page.body.data.map((event) => event.id));
    cursor = page.body.nextCursor;
    if (page.body.done) return ids;
  }
  throw new Error('the feed never said done');
}

/** The tenant's events as the sharded partitions hold them. */
async function shardedEvents(orgId: string): Promise<Item[]> {
  const items: Item[] = [];
  for (const pk of keys.eventsPartitions(orgId)) {
    const page = await client.send(
      new QueryCommand({
        TableName: table(),
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ConsistentRead: true,
      }),
    );
    items.push(...(page.Items ?? []));
  }
  return items;
}

describe('the sharded keys backfill', () => {
  it('makes conversations and events written before issue 37 listed, synced and in the feed, once', async () => {
    const { visitor } = await createVisitor(tenant.widgetKey);
    const since = new Date(clock.nowMs() - 1_000).toISOString();
    const created = await call<{ id: string }>('POST', '/api/conversations', {
      token: tenant.apiKey,
      body: { visitorId: visitor.id, message: 'written before the shards' },
    });
    expect(created.status, created.text).toBe(201);
    const conversationId = created.body.id;
    const assigned = await call('PATCH', `/api/conversations/${conversationId}`, {
      token: tenant.apiKey,
      body: { operatorId: tenant.operatorId },
    });
    expect(assigned.status, assigned.text).toBe(200);

    // The conversation as the code before issue 37 wrote it: the same item, unsharded index keys.
    const conversationKey = keys.conversation(tenant.orgId, conversationId);
    const stored = (await read(conversationKey)) as Item;
    expect(stored.gsi3pk).toEqual(expect.any(String));
    const old = {
      ...stored,
      gsi1pk: unsharded(stored.gsi1pk),
      gsi2pk: unsharded(stored.gsi2pk),
      gsi3pk: unsharded(stored.gsi3pk),
    };
    expect(old.gsi1pk).toBe(`ORG#${tenant.orgId}#CONVS#UPDATED`);
    await client.send(new PutCommand({ TableName: table(), Item: old }));

    // Events in the single partition: one moved two days on, one an hour old, one expired.
    const message = (await shardedEvents(tenant.orgId)).find((item) => item.type === 'message.created');
    expect(message).toBeDefined();
    const nowMs = clock.nowMs();
    const legacyEvent = (ageMs: number, expiresInMs: number) => {
      const id = uuidv7(nowMs - ageMs);
      return {
        ...message,
        pk: legacyEvents(tenant.orgId),
        sk: `${keys.eventPrefix}${id}`,
        id,
        timestamp: new Date(nowMs - ageMs).toISOString(),
        expiresAt: Math.floor((nowMs + expiresInMs) / 1000),
      };
    };
    const twoDays = legacyEvent(2 * DAY_MS, 33 * DAY_MS);
    const anHour = legacyEvent(3_600_000, 34 * DAY_MS);
    const expired = legacyEvent(36 * DAY_MS, -DAY_MS);
    for (const Item of [twoDays, anHour, expired])
      await client.send(new PutCommand({ TableName: table(), Item }));

    // Before: none of it is seen.
    const before = await eventuallyIndexed(
      () => listed('limit=100'),
      (ids) => !ids.includes(conversationId),
    );
    expect(before).not.toContain(conversationId);
    expect(await feedIds()).not.toContain(twoDays.id);

    // A webhook subscribed to the moved events' type (its target need not answer: attempts are recorded).
    const hook = await call<{ id: string }>('POST', '/api/webhooks', {
      token: tenant.apiKey,
      body: {
        url: `http://127.0.0.1:${inject('webhookTestPorts')[3]}/shard-backfill`,
        events: ['message.created'],
      },
    });
    expect(hook.status, hook.text).toBe(201);

    const { backfillShardedKeys } = await import('../../shared/db/shard-backfill');
    const pages: unknown[] = [];
    const first = await backfillShardedKeys((progress) => pages.push(progress));
    expect(pages.length).toBeGreaterThanOrEqual(1);
    expect(first.scanned).toBeGreaterThan(0);
    expect(first.conversationsUpdated).toBeGreaterThanOrEqual(1);
    expect(first.eventsMoved).toBeGreaterThanOrEqual(2);
    expect(first.eventsDropped).toBeGreaterThanOrEqual(1);
    expect(first.eventsHeld).toBeGreaterThanOrEqual(1);

    // Only the index keys changed, to what the current code writes.
    expect(await read(conversationKey)).toEqual(stored);

    // Every listing that reads a sharded partition sees it a moment later.
    for (const query of ['limit=100', 'status=open&limit=100', `operatorId=${tenant.operatorId}&limit=100`]) {
      const ids = await eventuallyIndexed(
        () => listed(query),
        (found) => found.includes(conversationId),
      );
      expect(ids, query).toContain(conversationId);
    }
    // A sync serves a change once it has settled (SYNC_SETTLE_MS): let that pass rather than race it.
    stackClock.advance(SYNC_SETTLE_MS);
    const synced = await eventuallyIndexed(
      () => listed(`updatedSince=${encodeURIComponent(since)}&limit=100`),
      (found) => found.includes(conversationId),
    );
    expect(synced).toContain(conversationId);

    // The feed serves both live events once each, and not the expired one.
    const feed = await eventually(feedIds, (ids) => ids.includes(twoDays.id) && ids.includes(anHour.id));
    expect(feed.filter((id) => id === twoDays.id)).toHaveLength(1);
    expect(feed.filter((id) => id === anHour.id)).toHaveLength(1);
    expect(feed).not.toContain(expired.id);

    // A move is no new event: the webhook hears of a message posted after it, not of the moved ones.
    const posted = await call('POST', `/api/conversations/${conversationId}/messages`, {
      token: tenant.adminSession,
      body: { content: 'after the backfill' },
    });
    expect(posted.status, posted.text).toBe(201);
    const deliveries = await eventually(
      async () =>
        (
          await call<{ data: { eventId: string }[] }>('GET', `/api/webhooks/${hook.body.id}/deliveries`, {
            token: tenant.apiKey,
          })
        ).body.data,
      (list) => list.length > 0,
      { timeoutMs: 10_000, intervalMs: 250 },
    );
    expect(deliveries.length).toBeGreaterThan(0);
    expect(deliveries.map((delivery) => delivery.eventId)).not.toContain(twoDays.id);
    expect(deliveries.map((delivery) => delivery.eventId)).not.toContain(anHour.id);

    // The copies are the events as they were, under their shard's key.
    const { pk: _pk, sk: _sk, ...attributes } = twoDays;
    expect(await read(keys.event(tenant.orgId, twoDays.id))).toEqual({
      ...attributes,
      ...keys.event(tenant.orgId, twoDays.id),
    });
    expect(await read(keys.event(tenant.orgId, anHour.id))).toMatchObject({ entity: 'event', id: anHour.id });
    expect(await read(keys.event(tenant.orgId, expired.id))).toBeUndefined();
    // The old items are gone, but for the one a stream record could still name (younger than 24 h).
    expect(await read({ pk: twoDays.pk, sk: twoDays.sk })).toBeUndefined();
    expect(await read({ pk: expired.pk, sk: expired.sk })).toBeUndefined();
    expect(await read({ pk: anHour.pk, sk: anHour.sk })).toBeDefined();

    // Run again: nothing left to write.
    const second = await backfillShardedKeys();
    expect(second).toMatchObject({ conversationsUpdated: 0, eventsMoved: 0, eventsDropped: 0 });
    expect(second.eventsHeld).toBeGreaterThanOrEqual(1);
    // A day later the held old item goes too, and the feed still serves the event once.
    stackClock.advance(DAY_MS);
    try {
      const later = await backfillShardedKeys();
      expect(later).toMatchObject({ conversationsUpdated: 0, eventsMoved: 0 });
      expect(await read({ pk: anHour.pk, sk: anHour.sk })).toBeUndefined();
      expect(await read(keys.event(tenant.orgId, anHour.id))).toBeDefined();
    } finally {
      stackClock.advance(-DAY_MS);
    }
  }, 60_000);
});
