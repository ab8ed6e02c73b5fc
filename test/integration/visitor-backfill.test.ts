import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { keys } from '../../shared/db/keys';
import { SYNC_SETTLE_MS } from '../../shared/db/sync';
import { call, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { useInProcessStack } from '../helpers/in-process-stack';
import { eventuallyIndexed } from '../helpers/indexed';

/**
 * `npm run visitors:backfill` (shared/db/visitor-backfill.ts): a visitor written before the contacts
 * work has no listing or sync keys, so the listing, its filters and `updatedSince` miss it until the
 * backfill gives it the keys its state implies.
 */
const stackClock = useInProcessStack();

interface Profile {
  id: string;
  email: string | null;
  lastSeenAt: string;
  updatedAt: string;
}
interface Page {
  data: Profile[];
  nextCursor: string | null;
}

let tenant: Tenant;
let client: DynamoDBDocumentClient;

beforeAll(async () => {
  tenant = await createTenant();
  client = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: inject('endpoints').dynamodb }));
});

afterAll(() => client.destroy());

const listed = async (query: string) => {
  const page = await call<Page>('GET', `/api/visitors?${query}`, { token: tenant.apiKey });
  expect(page.status, page.text).toBe(200);
  return page.body.data;
};

describe('the visitor key backfill', () => {
  it('makes a visitor written before the contacts work listable, findable by e-mail and synced, once', async () => {
    const { visitor } = await createVisitor(tenant.widgetKey);
    const email = `old-${visitor.id}@example.com`;
    const patched = await call('PATCH', `/api/visitors/${visitor.id}`, {
      token: tenant.apiKey,
      body: { email },
    });
    expect(patched.status, patched.text).toBe(200);

    // The item as the widget wrote it before: no index keys, no updatedAt.
    const table = inject('tableName');
    const key = keys.visitor(tenant.orgId, visitor.id);
    const stored = (await client.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true })))
      .Item as Record<string, unknown>;
    const old = Object.fromEntries(
      Object.entries(stored).filter(([name]) => !/^gsi\d(pk|sk)$/.test(name) && name !== 'updatedAt'),
    );
    await client.send(new PutCommand({ TableName: table, Item: old }));
    expect((await listed('limit=100')).map((found) => found.id)).not.toContain(visitor.id);
    expect(await listed(`email=${encodeURIComponent(email)}`)).toEqual([]);

    const { backfillVisitorKeys } = await import('../../shared/db/visitor-backfill');
    const first = await backfillVisitorKeys();
    expect(first.updated).toBeGreaterThanOrEqual(1);

    // The listings read indexes, which show the backfilled keys a moment later.
    const all = await eventuallyIndexed(
      () => listed('limit=100'),
      (found) => found.some((each) => each.id === visitor.id),
    );
    expect(all.map((found) => found.id)).toContain(visitor.id);
    const byEmail = await eventuallyIndexed(
      () => listed(`email=${encodeURIComponent(email)}`),
      (found) => found.length > 0,
    );
    expect(byEmail.map((found) => found.id)).toEqual([visitor.id]);
    // With no updatedAt of its own, the visitor changed when it was last seen.
    expect(byEmail[0]?.updatedAt).toBe(byEmail[0]?.lastSeenAt);
    // A sync serves a change once it has settled (SYNC_SETTLE_MS): let that pass rather than race it.
    stackClock.advance(SYNC_SETTLE_MS);
    const synced = await eventuallyIndexed(
      () => listed(`updatedSince=${encodeURIComponent(byEmail[0]?.lastSeenAt ?? '')}&limit=100`),
      (found) => found.some((each) => each.id === visitor.id),
    );
    expect(synced.map((found) => found.id)).toContain(visitor.id);

    // Run again: what has its keys is left alone.
    const backfilled = (
      await client.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))
    ).Item;
    await backfillVisitorKeys();
    const after = (await client.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true })))
      .Item;
    expect(after).toEqual(backfilled);
  }, 60_000);
});
