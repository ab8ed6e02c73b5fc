import {
  BatchGetCommand,
  type BatchGetCommandInput,
  DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, describe, expect, it } from 'vitest';
import { listConversations } from '../../shared/db/conversation-listing';
import { keys } from '../../shared/db/keys';
import { LISTING_SHARDS, shardOf } from '../../shared/db/shards';
import { uuidv7 } from '../../shared/ids';
import type { ListConversationsQuery } from '../../shared/schemas/conversation';
import { conversationExample } from '../../shared/schemas/examples';

/**
 * The organization's listing of every status merges its four status partitions (gsi2). In AWS an
 * index lags its table: right after a status change the conversation's new entry can already be in
 * its new partition while the old one is still in the old partition. DynamoDB Local never shows
 * that, so the index is played here as it lags.
 */
const ddb = mockClient(DynamoDBDocumentClient);
afterAll(() => ddb.restore());

type Item = Record<string, unknown>;
const orgId = uuidv7();
const at = (second: number) => `2026-11-21T10:00:${String(second).padStart(2, '0')}.000Z`;

function conversation(status: string, lastMessageAt: string): Item {
  const id = uuidv7();
  return {
    ...keys.conversation(orgId, id),
    entity: 'conversation',
    ...conversationExample,
    id,
    organizationId: orgId,
    status,
    lastMessageAt,
  };
}

/** An entry of `item` in a status partition, where the index holds it (maybe one the item has left). */
const entry = (item: Item, status: string, lastMessageAt = String(item.lastMessageAt)): Item => ({
  pk: item.pk,
  sk: item.sk,
  gsi2pk: keys.conversationListPartition.status(orgId, status, shardOf(String(item.id), LISTING_SHARDS)).pk,
  gsi2sk: `${lastMessageAt}#${String(item.id)}`,
  priority: item.priority,
  tags: item.tags,
});

/**
 * Serves `entries` as the index's status partitions (newest first, the sort key's bounds, `Limit`
 * and start keys as DynamoDB reads them) and `items` as the table; BatchGetItem refuses a key named
 * twice, as AWS does (ValidationException).
 */
function serve(entries: Item[], items: Item[]): void {
  ddb.reset();
  ddb.on(QueryCommand).callsFake((input: QueryCommandInput) => {
    const values = input.ExpressionAttributeValues ?? {};
    const pk = values[':pk'];
    const since = values[':since'] as string | undefined;
    const before = values[':before'] as string | undefined;
    const inclusive = input.KeyConditionExpression?.includes('BETWEEN') ?? false;
    const partition = entries
      .filter((candidate) => candidate.gsi2pk === pk)
      .filter(({ gsi2sk }) => since === undefined || String(gsi2sk) >= since)
      .filter(
        ({ gsi2sk }) => before === undefined || String(gsi2sk) < before || (inclusive && gsi2sk === before),
      )
      .sort((a, b) => String(b.gsi2sk).localeCompare(String(a.gsi2sk)));
    const after = input.ExclusiveStartKey?.gsi2sk;
    const start = after === undefined ? 0 : partition.findIndex((e) => e.gsi2sk === after) + 1;
    const page = partition.slice(start, start + (input.Limit ?? partition.length));
    const last = page.at(-1);
    const more = start + page.length < partition.length;
    return { Items: page, ...(more && last ? { LastEvaluatedKey: last } : {}) };
  });
  ddb.on(BatchGetCommand).callsFake((input: BatchGetCommandInput) => {
    const [table, request] = Object.entries(input.RequestItems ?? {})[0] ?? [];
    const named = (request?.Keys ?? []).map((key) => `${key.pk}|${key.sk}`);
    if (new Set(named).size !== named.length)
      throw Object.assign(new Error('Provided list of item keys contains duplicates'), {
        name: 'ValidationException',
      });
    return {
      Responses: { [String(table)]: items.filter((item) => named.includes(`${item.pk}|${item.sk}`)) },
    };
  });
}

/** Every page of the listing of all statuses, `limit` at a time: [id, status] in order. */
async function listAll(
  limit: number,
  filters: Partial<ListConversationsQuery> = {},
): Promise<[string, string][]> {
  const listed: [string, string][] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 20; pages++) {
    const query = { ...filters, limit, ...(cursor ? { cursor } : {}) } as ListConversationsQuery;
    const page = await listConversations(orgId, query, undefined);
    expect(page.data.length).toBeLessThanOrEqual(limit);
    listed.push(...page.data.map((found): [string, string] => [found.id, found.status]));
    if (!page.nextCursor) return listed;
    cursor = page.nextCursor;
  }
  throw new Error('the listing never ended');
}

describe('the listing of every status while an index lags', () => {
  it('shows a conversation in two status partitions once, in its current status, on any page size', async () => {
    // Moved from open to pending a moment ago: the same place in both partitions.
    const moved = conversation('pending', at(30));
    const closed = conversation('closed', at(20));
    const open = conversation('open', at(10));
    serve(
      [entry(moved, 'open'), entry(moved, 'pending'), entry(closed, 'closed'), entry(open, 'open')],
      [moved, closed, open],
    );
    for (const limit of [1, 2, 3, 100]) {
      expect(await listAll(limit)).toEqual([
        [moved.id, 'pending'],
        [closed.id, 'closed'],
        [open.id, 'open'],
      ]);
    }
  });

  it('shows it once when a message moved it too, its old entry pages behind', async () => {
    // Pending now and with a new message: its new entry is the newest, the old one still sits in
    // the open partition at its old place, after the others.
    const moved = conversation('pending', at(40));
    const closed = conversation('closed', at(20));
    const open = conversation('open', at(10));
    serve(
      [entry(moved, 'pending'), entry(moved, 'open', at(5)), entry(closed, 'closed'), entry(open, 'open')],
      [moved, closed, open],
    );
    for (const limit of [1, 2, 3, 100]) {
      expect(await listAll(limit)).toEqual([
        [moved.id, 'pending'],
        [closed.id, 'closed'],
        [open.id, 'open'],
      ]);
    }
  });
});

/** A conversation whose id falls in `shard` of the listings. */
function inShard(shard: number, status: string, lastMessageAt: string, priority: string): Item {
  for (;;) {
    const item: Item = { ...conversation(status, lastMessageAt), priority };
    if (shardOf(String(item.id), LISTING_SHARDS) === shard) return item;
  }
}

describe('the listing merged over shards', () => {
  it('waits for a shard that a sparse filter left half read, so a newer match there is not passed', async () => {
    // Shard 0 holds 600 newer conversations the filter drops: a page reads 10 Queries of them and
    // stops. Its one match (950 s) is newer than shard 1's, which was read to its end.
    const instant = (seconds: number) => new Date(Date.parse(at(0)) + seconds * 1000).toISOString();
    const noise = Array.from({ length: 600 }, (_, i) => inShard(0, 'open', instant(1000 + i), 'low'));
    const newest = inShard(0, 'open', instant(950), 'high');
    const older = [inShard(1, 'open', instant(900), 'high'), inShard(1, 'closed', instant(200), 'high')];
    const items = [...noise, newest, ...older];
    serve(
      items.map((item) => entry(item, String(item.status))),
      items,
    );
    for (const limit of [1, 2, 10]) {
      expect(await listAll(limit, { priority: 'high' })).toEqual([
        [newest.id, 'open'],
        [older[0]?.id, 'open'],
        [older[1]?.id, 'closed'],
      ]);
    }
  });

  it('holds only the last sort key served in its cursor, whatever the number of partitions', async () => {
    const items = Array.from({ length: 40 }, (_, i) =>
      conversation(['open', 'pending', 'snoozed', 'closed'][i % 4] ?? 'open', at(i)),
    );
    serve(
      items.map((item) => entry(item, String(item.status))),
      items,
    );
    const page = await listConversations(orgId, { limit: 5 } as ListConversationsQuery, undefined);
    expect(page.data.map((found) => found.id)).toEqual(
      items
        .slice(-5)
        .reverse()
        .map((item) => item.id),
    );
    expect(page.nextCursor?.length).toBeLessThan(300);
    expect(new Set(items.map((item) => shardOf(String(item.id), LISTING_SHARDS))).size).toBeGreaterThan(1);
    expect((await listAll(7)).map(([id]) => id)).toEqual(items.map((item) => item.id).reverse());
  });
});
