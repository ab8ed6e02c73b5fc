import type { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { queryPage } from '../../shared/db/query';

/**
 * A partition as DynamoDB serves a Query of it: at most `Limit` items per response, and fewer when
 * the response reaches its size cap (1 MB, here `perResponse` items). A response that stopped on
 * either has a LastEvaluatedKey, even when nothing follows.
 */
const partition = vi.hoisted(() => ({
  items: [] as Record<string, unknown>[],
  perResponse: 3,
  limits: [] as number[],
}));

vi.mock('../../shared/db/client', () => ({
  tableName: 'table',
  db: {
    send: async (command: QueryCommand) => {
      const { Limit = Number.POSITIVE_INFINITY, ExclusiveStartKey } = command.input;
      partition.limits.push(Limit);
      const from = ExclusiveStartKey
        ? partition.items.findIndex((item) => item.sk === ExclusiveStartKey.sk) + 1
        : 0;
      const Items = partition.items.slice(from, from + Math.min(Limit, partition.perResponse));
      const stopped = Items.length === Limit || Items.length === partition.perResponse;
      const last = Items.at(-1);
      return { Items, ...(stopped && last ? { LastEvaluatedKey: { pk: last.pk, sk: last.sk } } : {}) };
    },
  },
}));

const fill = (count: number, bodyBytes = 10) => {
  partition.items = Array.from({ length: count }, (_, i) => ({
    pk: 'P',
    sk: `MSG#${String(i).padStart(3, '0')}`,
    body: 'x'.repeat(bodyBytes),
  }));
};
const sks = (items: Record<string, unknown>[]) => items.map((item) => item.sk);
const query = { TableName: 'table', KeyConditionExpression: 'pk = :pk' };

beforeEach(() => {
  partition.perResponse = 3;
  partition.limits = [];
});

describe('queryPage', () => {
  it('follows responses the size cap cut short until the page is full, and tells that more follow', async () => {
    fill(10);
    const page = await queryPage(query, undefined, 5);
    expect(sks(page.items)).toEqual(sks(partition.items.slice(0, 5)));
    expect(page.more).toBe(true);
    // Each response asks for what the page still lacks, the one past it included.
    expect(partition.limits).toEqual([6, 3]);
    const rest = await queryPage(query, { pk: 'P', sk: partition.items[4]?.sk }, 5);
    expect(sks(rest.items)).toEqual(sks(partition.items.slice(5)));
    expect(rest.more).toBe(false);
  });

  it('knows whether more follow when the cap stopped a response exactly at the end of the page', async () => {
    fill(6);
    const whole = await queryPage(query, undefined, 6);
    expect(whole.items).toHaveLength(6);
    expect(whole.more).toBe(false);
    fill(7);
    const page = await queryPage(query, undefined, 6);
    expect(page.items).toHaveLength(6);
    expect(page.more).toBe(true);
  });

  it('ends a page early, with more to follow, before the item that would pass maxBytes', async () => {
    fill(10, 100);
    const size = Buffer.byteLength(JSON.stringify(partition.items[0]));
    const page = await queryPage(query, undefined, 8, { maxBytes: size * 3 + 1 });
    expect(sks(page.items)).toEqual(sks(partition.items.slice(0, 3)));
    expect(page.more).toBe(true);
    // Never an empty page: a cursor that does not move would never end.
    const one = await queryPage(query, undefined, 8, { maxBytes: 1 });
    expect(one.items).toHaveLength(1);
    expect(one.more).toBe(true);
  });
});
