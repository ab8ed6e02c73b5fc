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
  gsi2pk: keys.conversationListPartition.status(orgId, status).pk,
  gsi2sk: `${lastMessageAt}#${String(item.id)}`,
  priority: item.priority,
  tags: item.tags,
});

/**
 * Serves `entries` as the index's status partitions (newest first, `Limit` and start keys as
 * DynamoDB reads them) and `items` as the table; BatchGetItem refuses a key named twice, as AWS
 * does (ValidationException).
 */
function serve(entries: Item[], items: Item[]): void {
  ddb.reset();
  ddb.on(QueryCommand).callsFake((input: QueryCommandInput) => {
    const pk = input.ExpressionAttributeValues?.[':pk'];
    const partition = entries
      .filter((candidate) => candidate.gsi2pk === pk)
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
async function listAll(limit: number): Promise<[string, string][]> {
  const listed: [string, string][] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 20; pages++) {
    const query = { limit, ...(cursor ? { cursor } : {}) } as ListConversationsQuery;
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
