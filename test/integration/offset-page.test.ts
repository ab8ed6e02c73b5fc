import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { eventually } from '../helpers/eventually';
import { useInProcessStack } from '../helpers/in-process-stack';

/**
 * `offsetPage`, the read behind the offset listings that need an exact `totalItems` (webhook
 * deliveries, survey responses), on DynamoDB Local: every page and total against a recount, a
 * filter that drops items after `Limit` applied, pages the 1 MB cap cuts short, and its requests:
 * one when the set fits the page, a count of the rest only when items follow it.
 */
useInProcessStack();

type Query = typeof import('../../shared/db/query');
type Client = typeof import('../../shared/db/client');
let offsetPage: Query['offsetPage'];
let client: Client;

beforeAll(async () => {
  ({ offsetPage } = await import('../../shared/db/query'));
  client = await import('../../shared/db/client');
});

const PREFIX = 'ITEM#';

/**
 * Items `ITEM#00`…, every fifth expired; one item of another prefix that no page may show. Large
 * items (3 MB in one partition key) go past the partition's 1,000 WCU/s, in AWS as in the layer in
 * front of DynamoDB Local: the seed writes them as a bulk loader must, with a client of its own that
 * waits out throttling longer than the service's (3 attempts), and sends unprocessed items again.
 */
async function seed(count: number, padding = 0): Promise<{ pk: string; live: string[] }> {
  const { BatchWriteCommand, DynamoDBDocumentClient } = await import('@aws-sdk/lib-dynamodb');
  const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
  const loader = DynamoDBDocumentClient.from(new DynamoDBClient({ maxAttempts: 10 }));
  const pk = `TEST#offset-page#${randomUUID()}`;
  const items = Array.from({ length: count }, (_, i) => ({
    pk,
    sk: `${PREFIX}${String(i).padStart(2, '0')}`,
    expired: i % 5 === 4,
    ...(padding ? { padding: 'x'.repeat(padding) } : {}),
  }));
  const all = [...items, { pk, sk: 'OTHER#00', expired: false }];
  try {
    for (let i = 0; i < all.length; i += 25) {
      let pending: { PutRequest?: { Item: Record<string, unknown> | undefined } }[] = all
        .slice(i, i + 25)
        .map((Item) => ({ PutRequest: { Item } }));
      await eventually(
        async () => {
          const written = await loader.send(
            new BatchWriteCommand({ RequestItems: { [client.tableName]: pending } }),
          );
          pending = written.UnprocessedItems?.[client.tableName] ?? [];
          return pending.length;
        },
        (left) => left === 0,
      );
      expect(pending).toEqual([]);
    }
  } finally {
    loader.destroy();
  }
  const live = items
    .filter((item) => !item.expired)
    .map((item) => item.sk)
    .reverse();
  return { pk, live };
}

function input(pk: string) {
  return {
    TableName: client.tableName,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    FilterExpression: 'expired = :no',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': PREFIX, ':no': false },
    ScanIndexForward: false,
    ConsistentRead: true,
  };
}

/** The page and total, and how many requests DynamoDB received for them. */
async function read(pk: string, offset: number, limit: number) {
  const send = vi.spyOn(client.db, 'send');
  try {
    const { items, total } = await offsetPage(input(pk), offset, limit);
    return { page: items.map((item) => item.sk), total, requests: send.mock.calls.length };
  } finally {
    send.mockRestore();
  }
}

describe('offsetPage', () => {
  it('reads every page and the total exactly, filtered items left out of both', async () => {
    const { pk, live } = await seed(23);
    expect(live).toHaveLength(19);
    for (const limit of [1, 4, 20, 100]) {
      for (const offset of [0, 3, 18, 19, 40]) {
        const { page, total } = await read(pk, offset, limit);
        expect({ offset, limit, page, total }).toEqual({
          offset,
          limit,
          page: live.slice(offset, offset + limit),
          total: live.length,
        });
      }
    }
  });

  it('answers a set that fits in the page with one request, and counts the rest only when items follow', async () => {
    const { pk } = await seed(23);
    expect((await read(pk, 0, 100)).requests).toBe(1);
    expect((await read(pk, 0, 24)).requests).toBe(1);
    // The page (ITEM#22…20) ends inside the set: one count of what follows it.
    expect((await read(pk, 0, 3)).requests).toBe(2);
    // The filter drops ITEM#19 after Limit applied: the page reads on for one item, then counts.
    expect((await read(pk, 0, 4)).requests).toBe(3);
  });

  it('follows pages the 1 MB cap cuts short, for the page and for the count', async () => {
    // 30 items of ~100 KB: about ten per page of a Query.
    const { pk, live } = await seed(30, 100_000);
    const first = await read(pk, 0, 20);
    expect(first.page).toEqual(live.slice(0, 20));
    expect(first.total).toBe(live.length);
    expect(first.requests).toBeGreaterThan(2);
    const last = await read(pk, 20, 20);
    expect(last.page).toEqual(live.slice(20));
    expect(last.total).toBe(live.length);
  });
});
