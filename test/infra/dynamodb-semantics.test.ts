/**
 * The DynamoDB semantics layer (infra/local/dynamodb-semantics/) held to AWS's documented behaviour,
 * through the real AWS SDK v3 clients, in front of a real DynamoDB Local: transaction conflicts
 * (Developer Guide, "Transaction conflict handling in DynamoDB"), index propagation lag ("Global
 * secondary indexes": eventually consistent), partition throughput (1,000 WCU/s and 3,000 RCU/s per
 * partition, here divided), stale eventually consistent reads (opt-in), and the variables that turn
 * each part off.
 */
import { randomUUID } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  DynamoDBClient,
  IdempotentParameterMismatchException,
  ProvisionedThroughputExceededException,
  TransactionCanceledException,
  TransactionConflictException,
  TransactionInProgressException,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient, ListStreamsCommand } from '@aws-sdk/client-dynamodb-streams';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactGetCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTable } from '../../infra/local/bootstrap';
import {
  type DynamoDbSemantics,
  type LedgerSnapshot,
  readSemanticsConfig,
  startDynamoDbSemantics,
  withAwsSemantics,
} from '../../infra/local/dynamodb-semantics';
import { settleBytes } from '../../infra/local/dynamodb-semantics/capacity';
import { type RunningEmulator, startDynamoDb } from '../../infra/local/emulators';
import { eventually } from '../helpers/eventually';

const TableName = 'semantics-test';
const HOLD_MS = 500;
const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

let dynamodb: RunningEmulator;
const layers: DynamoDbSemantics[] = [];
const clients: DynamoDBClient[] = [];
const servers: Server[] = [];

/** A layer in front of DynamoDB Local, configured from these variables (as `npm start` reads them). */
async function layer(
  env: Record<string, string> = {},
  upstream = dynamodb.endpoint,
): Promise<DynamoDbSemantics> {
  const started = await startDynamoDbSemantics({ upstream, config: readSemanticsConfig(env) });
  layers.push(started);
  return started;
}

/** A document client that does not retry: each answer of the layer is seen as it is. */
function documentClient(endpoint: string): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: CREDENTIALS,
    maxAttempts: 1,
  });
  clients.push(client);
  return DynamoDBDocumentClient.from(client);
}

const unique = (what: string) => `${what}#${randomUUID()}`;

/** A conversation-like item: table key, and an entry in gsi1 under `gsi1pk`. */
const item = (pk: string, extra: Record<string, unknown> = {}) => ({
  pk,
  sk: 'item',
  gsi1pk: `${pk}#listing`,
  gsi1sk: new Date().toISOString(),
  ...extra,
});

const transaction = (shared: string, value: string) =>
  new TransactWriteCommand({
    TransactItems: [
      { Put: { TableName, Item: item(unique('other')) } },
      {
        Update: {
          TableName,
          Key: { pk: shared, sk: 'item' },
          UpdateExpression: 'SET #v = :v',
          ExpressionAttributeNames: { '#v': 'value' },
          ExpressionAttributeValues: { ':v': value },
        },
      },
    ],
  });

async function rejection(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error('expected a rejection');
}

/** Waits until a transaction or write holds its items in the layer (it is in flight). */
const holding = (on: DynamoDbSemantics) =>
  eventually(
    () => on.stats().heldItems,
    (held) => held > 0,
    { timeoutMs: 5_000, intervalMs: 2 },
  );

/** Between the layer and DynamoDB Local: holds each PutItem of an item whose key holds `slow` this long. */
async function slowPuts(delayMs: number): Promise<string> {
  const upstream = new URL(dynamodb.endpoint);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const slow = req.headers['x-amz-target'] === 'DynamoDB_20120810.PutItem' && body.includes('slow');
      setTimeout(
        () => {
          const outgoing = request(
            {
              host: upstream.hostname,
              port: upstream.port,
              method: req.method,
              path: req.url,
              headers: req.headers,
            },
            (answer) => {
              res.writeHead(answer.statusCode ?? 500, answer.headers);
              answer.pipe(res);
            },
          );
          outgoing.end(body);
        },
        slow ? delayMs : 0,
      );
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  // What the stack sets for the emulators (createTable's client reads them).
  process.env.AWS_REGION ??= 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
  dynamodb = await startDynamoDb(undefined);
  // The project's table (four global secondary indexes), created through a layer: CreateTable passes.
  const setup = await layer();
  await createTable(setup.endpoint, TableName);
}, 60_000);

afterAll(async () => {
  for (const client of clients) client.destroy();
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
  await Promise.all(layers.map((each) => each.close()));
  await dynamodb?.stop();
});

describe('transaction conflicts', () => {
  it('cancels the second of two transactions on one item with TransactionConflict, as the SDK reports it', async () => {
    const held = await layer({ DYNAMODB_CONFLICT_HOLD_MS: String(HOLD_MS) });
    const db = documentClient(held.endpoint);
    const shared = unique('shared');
    const first = db.send(transaction(shared, 'first'));
    await holding(held);
    const second = await rejection(db.send(transaction(shared, 'second')));
    await first;

    expect(second).toBeInstanceOf(TransactionCanceledException);
    expect(second.message).toBe(
      'Transaction cancelled, please refer cancellation reasons for specific reasons [None, TransactionConflict]',
    );
    expect((second as unknown as TransactionCanceledException).CancellationReasons).toEqual([
      { Code: 'None' },
      { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' },
    ]);
    expect(second.$metadata).toMatchObject({ httpStatusCode: 400 });
    const { Item } = await db.send(new GetCommand({ TableName, Key: { pk: shared, sk: 'item' } }));
    expect(Item?.value).toBe('first');
    expect(held.stats().transactionConflicts).toBe(1);
  });

  it("answers with AWS's exact body", async () => {
    const held = await layer({ DYNAMODB_CONFLICT_HOLD_MS: String(HOLD_MS) });
    const db = documentClient(held.endpoint);
    const shared = unique('shared');
    const first = db.send(transaction(shared, 'first'));
    await holding(held);
    const answer = await fetch(held.endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': 'DynamoDB_20120810.TransactWriteItems',
        authorization:
          'AWS4-HMAC-SHA256 Credential=local/20250101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
      },
      body: JSON.stringify({
        TransactItems: [
          { Put: { TableName, Item: { pk: { S: unique('other') }, sk: { S: 'item' } } } },
          { Delete: { TableName, Key: { pk: { S: shared }, sk: { S: 'item' } } } },
        ],
      }),
    });
    await first;
    expect(answer.status).toBe(400);
    expect(await answer.text()).toBe(
      '{"__type":"com.amazonaws.dynamodb.v20120810#TransactionCanceledException","message":"Transaction cancelled, please refer cancellation reasons for specific reasons [None, TransactionConflict]","CancellationReasons":[{"Code":"None"},{"Code":"TransactionConflict","Message":"Transaction is ongoing for the item"}]}',
    );
  });

  it('refuses PutItem, UpdateItem and DeleteItem of an item under a transaction (TransactionConflictException), and cancels TransactGetItems', async () => {
    const held = await layer({ DYNAMODB_CONFLICT_HOLD_MS: String(HOLD_MS) });
    const db = documentClient(held.endpoint);
    const shared = unique('shared');
    const first = db.send(transaction(shared, 'first'));
    await holding(held);
    const Key = { pk: shared, sk: 'item' };
    const refused = await Promise.all([
      rejection(db.send(new PutCommand({ TableName, Item: item(shared) }))),
      rejection(
        db.send(
          new UpdateCommand({
            TableName,
            Key,
            UpdateExpression: 'SET n = :n',
            ExpressionAttributeValues: { ':n': 1 },
          }),
        ),
      ),
      rejection(db.send(new DeleteCommand({ TableName, Key }))),
    ]);
    const read = await rejection(
      db.send(
        new TransactGetCommand({
          TransactItems: [
            { Get: { TableName, Key: { pk: unique('other'), sk: 'item' } } },
            { Get: { TableName, Key } },
          ],
        }),
      ),
    );
    await first;
    for (const error of refused) {
      expect(error).toBeInstanceOf(TransactionConflictException);
      expect(error.message).toBe('Transaction is ongoing for the item');
    }
    expect(read).toBeInstanceOf(TransactionCanceledException);
    expect((read as unknown as TransactionCanceledException).CancellationReasons?.map((r) => r.Code)).toEqual(
      ['None', 'TransactionConflict'],
    );
    // Once the transaction has answered, the item is free again.
    await db.send(new PutCommand({ TableName, Item: item(shared) }));
    expect(held.stats()).toMatchObject({ writeConflicts: 3, transactionConflicts: 1 });
  });

  it('lets transactions on different items both commit', async () => {
    const held = await layer({ DYNAMODB_CONFLICT_HOLD_MS: String(HOLD_MS) });
    const db = documentClient(held.endpoint);
    const [a, b] = [unique('a'), unique('b')];
    await Promise.all([db.send(transaction(a, 'a')), db.send(transaction(b, 'b'))]);
    const read = await db.send(
      new BatchGetCommand({
        RequestItems: {
          [TableName]: { Keys: [a, b].map((pk) => ({ pk, sk: 'item' })), ConsistentRead: true },
        },
      }),
    );
    expect(read.Responses?.[TableName]?.map((each) => each.value).sort()).toEqual(['a', 'b']);
    expect(held.stats().transactionConflicts).toBe(0);
  });

  it('cancels a transaction naming an item a single write has in flight', async () => {
    // Held the whole time it is in flight (no cap to AWS's run time): the slow PutItem is the point.
    const on = await layer({ DYNAMODB_TRANSACTION_MS: '0' }, await slowPuts(HOLD_MS));
    const db = documentClient(on.endpoint);
    const shared = unique('slow');
    const put = db.send(new PutCommand({ TableName, Item: item(shared) }));
    await holding(on);
    const cancelled = await rejection(db.send(transaction(shared, 'late')));
    await put;
    expect(cancelled).toBeInstanceOf(TransactionCanceledException);
    expect(
      (cancelled as unknown as TransactionCanceledException).CancellationReasons?.map((r) => r.Code),
    ).toEqual(['None', 'TransactionConflict']);
  });

  it('honours ClientRequestToken: a repeat succeeds without writing, other parameters are a mismatch, a repeat in flight is in progress', async () => {
    const held = await layer({ DYNAMODB_CONFLICT_HOLD_MS: String(HOLD_MS) });
    const db = documentClient(held.endpoint);
    const pk = unique('counter');
    const add = (by: number, ClientRequestToken: string) =>
      new TransactWriteCommand({
        ClientRequestToken,
        TransactItems: [
          {
            Update: {
              TableName,
              Key: { pk, sk: 'item' },
              UpdateExpression: 'ADD n :by',
              ExpressionAttributeValues: { ':by': by },
            },
          },
        ],
      });
    const token = randomUUID();
    const first = db.send(add(1, token));
    await holding(held);
    expect(await rejection(db.send(add(1, token)))).toBeInstanceOf(TransactionInProgressException);
    await first;
    await db.send(add(1, token));
    expect(await rejection(db.send(add(2, token)))).toBeInstanceOf(IdempotentParameterMismatchException);
    const { Item } = await db.send(
      new GetCommand({ TableName, Key: { pk, sk: 'item' }, ConsistentRead: true }),
    );
    expect(Item?.n).toBe(1);
  });

  it('DYNAMODB_CONFLICTS=off: concurrent transactions on one item both commit, as in DynamoDB Local', async () => {
    const off = await layer({ DYNAMODB_CONFLICTS: 'off', DYNAMODB_CONFLICT_HOLD_MS: String(HOLD_MS) });
    const db = documentClient(off.endpoint);
    const shared = unique('shared');
    const results = await Promise.allSettled([
      db.send(transaction(shared, 'a')),
      db.send(transaction(shared, 'b')),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled']);
    expect(off.stats().transactionConflicts).toBe(0);
  });
});

describe('index propagation lag', () => {
  const byListing = (pk: string, extra: Record<string, unknown> = {}) =>
    new QueryCommand({
      TableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :p',
      ExpressionAttributeValues: { ':p': `${pk}#listing` },
      ...extra,
    });

  it('an index query right after a write misses the item and sees it once the lag has passed; the table sees it at once', async () => {
    const on = await layer();
    expect(on.config.indexLagMs).toBe(300);
    const db = documentClient(on.endpoint);
    const pk = unique('conversation');
    await db.send(new PutCommand({ TableName, Item: item(pk) }));
    const written = Date.now();

    const missed = await db.send(byListing(pk));
    expect(missed.Items).toEqual([]);
    expect(missed.Count).toBe(0);
    expect(missed.ScannedCount).toBe(1);
    expect((await db.send(byListing(pk, { Select: 'COUNT' }))).Count).toBe(0);
    // Base-table reads are not delayed.
    expect((await db.send(new GetCommand({ TableName, Key: { pk, sk: 'item' } }))).Item?.pk).toBe(pk);
    const table = await db.send(
      new QueryCommand({
        TableName,
        KeyConditionExpression: 'pk = :p',
        ExpressionAttributeValues: { ':p': pk },
      }),
    );
    expect(table.Count).toBe(1);

    const seen = await eventually(
      () => db.send(byListing(pk)),
      (answer) => answer.Count === 1,
      { timeoutMs: 3_000, intervalMs: 20 },
    );
    expect(seen.Items?.[0]?.pk).toBe(pk);
    expect(Date.now() - written).toBeGreaterThanOrEqual(250);
    expect((await db.send(byListing(pk, { Select: 'COUNT' }))).Count).toBe(1);
    expect(on.stats().hiddenByIndexLag).toBeGreaterThanOrEqual(2);
  });

  it('counts Limit in the items the index shows, and applies to each item of a transaction or batch', async () => {
    const on = await layer();
    const db = documentClient(on.endpoint);
    const pk = unique('conversation');
    await db.send(new PutCommand({ TableName, Item: item(pk, { gsi1sk: '1' }) }));
    await eventually(
      () => db.send(byListing(pk)),
      (answer) => answer.Count === 1,
      { timeoutMs: 3_000, intervalMs: 20 },
    );
    await db.send(
      new TransactWriteCommand({
        TransactItems: [{ Put: { TableName, Item: { ...item(pk), sk: 'b', gsi1sk: '2' } } }],
      }),
    );
    await db.send(
      new BatchWriteCommand({
        RequestItems: { [TableName]: [{ PutRequest: { Item: { ...item(pk), sk: 'c', gsi1sk: '3' } } }] },
      }),
    );
    await db.send(new PutCommand({ TableName, Item: { ...item(pk), sk: 'd', gsi1sk: '4' } }));
    // Newest first, Limit 2: the three fresh entries are not in the index yet, so AWS answers the one
    // it shows, and no LastEvaluatedKey (DynamoDB Local's first page held only hidden items).
    const page = await db.send(byListing(pk, { Limit: 2, ScanIndexForward: false }));
    expect(page.Items?.map((each) => each.gsi1sk)).toEqual(['1']);
    expect(page.LastEvaluatedKey).toBeUndefined();
    const all = await eventually(
      () => db.send(byListing(pk)),
      (answer) => answer.Count === 4,
      { timeoutMs: 3_000, intervalMs: 20 },
    );
    expect(all.Items?.map((each) => each.gsi1sk)).toEqual(['1', '2', '3', '4']);
  });

  it('tells items by their table key when the read names other attributes, and returns only those', async () => {
    const on = await layer();
    const db = documentClient(on.endpoint);
    const pk = unique('conversation');
    await db.send(new PutCommand({ TableName, Item: item(pk, { gsi1sk: 'only' }) }));
    const projected = (extra: Record<string, unknown>) => db.send(byListing(pk, extra));
    expect((await projected({ ProjectionExpression: 'gsi1sk' })).Items).toEqual([]);
    expect(
      (await projected({ ProjectionExpression: '#s', ExpressionAttributeNames: { '#s': 'gsi1sk' } })).Count,
    ).toBe(0);
    const seen = await eventually(
      () => projected({ ProjectionExpression: 'gsi1sk' }),
      (answer) => answer.Count === 1,
      { timeoutMs: 3_000, intervalMs: 20 },
    );
    expect(seen.Items).toEqual([{ gsi1sk: 'only' }]);
  });

  it('DYNAMODB_INDEX_LAG_MS=0: the index sees a write at once', async () => {
    const off = await layer({ DYNAMODB_INDEX_LAG_MS: '0' });
    const db = documentClient(off.endpoint);
    const pk = unique('conversation');
    await db.send(new PutCommand({ TableName, Item: item(pk) }));
    expect((await db.send(byListing(pk))).Count).toBe(1);
    expect(off.stats().hiddenByIndexLag).toBe(0);
  });
});

describe('partition throughput', () => {
  it('throttles a partition over its divided limit while another partition is served', async () => {
    // 1,000 WCU/s ÷ 1,000: one write unit a second per partition.
    const slow = await layer({ DYNAMODB_PARTITION_DIVISOR: '1000' });
    const db = documentClient(slow.endpoint);
    const [hot, cold] = [unique('hot'), unique('cold')];
    await db.send(new PutCommand({ TableName, Item: { pk: hot, sk: '1' } }));
    const throttled = await rejection(db.send(new PutCommand({ TableName, Item: { pk: hot, sk: '2' } })));
    expect(throttled).toBeInstanceOf(ProvisionedThroughputExceededException);
    expect(throttled.message).toMatch(/^Throughput exceeds the current capacity of your table or index\./);
    expect((throttled as unknown as ProvisionedThroughputExceededException).ThrottlingReasons).toEqual([
      {
        reason: 'TableWriteKeyRangeThroughputExceeded',
        resource: expect.stringMatching(/:table\/semantics-test$/),
      },
    ]);
    await db.send(new PutCommand({ TableName, Item: { pk: cold, sk: '1' } }));
    // The bucket refills: the hot partition takes a write again after a second.
    await eventually(
      () =>
        db.send(new PutCommand({ TableName, Item: { pk: hot, sk: '3' } })).then(
          () => true,
          () => false,
        ),
      Boolean,
      { timeoutMs: 3_000, intervalMs: 100 },
    );
    expect(slow.stats().throttles).toBeGreaterThanOrEqual(1);
  });

  it("throttles writes landing in a hot index partition with the index's reason", async () => {
    const slow = await layer({ DYNAMODB_PARTITION_DIVISOR: '1000' });
    const db = documentClient(slow.endpoint);
    const listing = unique('listing');
    const put = (pk: string) =>
      db.send(new PutCommand({ TableName, Item: { pk, sk: 'item', gsi1pk: listing, gsi1sk: pk } }));
    await put(unique('a'));
    const throttled = await rejection(put(unique('b')));
    expect(throttled).toBeInstanceOf(ProvisionedThroughputExceededException);
    expect(throttled.message).toMatch(
      /^Throughput exceeds the current capacity for one or more global secondary indexes/,
    );
    expect((throttled as unknown as ProvisionedThroughputExceededException).ThrottlingReasons?.[0]).toEqual({
      reason: 'IndexWriteKeyRangeThroughputExceeded',
      resource: expect.stringMatching(/:table\/semantics-test\/index\/gsi1$/),
    });
  });

  it('cancels a transaction with ThrottlingError and leaves throttled batch items unprocessed', async () => {
    const slow = await layer({ DYNAMODB_PARTITION_DIVISOR: '1000' });
    const db = documentClient(slow.endpoint);
    const [hot, cold] = [unique('hot'), unique('cold')];
    await db.send(new PutCommand({ TableName, Item: { pk: hot, sk: '1' } }));
    const cancelled = await rejection(
      db.send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName, Item: { pk: cold, sk: '1' } } },
            { Put: { TableName, Item: { pk: hot, sk: '2' } } },
          ],
        }),
      ),
    );
    expect(cancelled).toBeInstanceOf(TransactionCanceledException);
    expect((cancelled as unknown as TransactionCanceledException).CancellationReasons).toEqual([
      { Code: 'None' },
      { Code: 'ThrottlingError', Message: expect.stringMatching(/^Throughput exceeds the current capacity/) },
    ]);
    const batch = await db.send(
      new BatchWriteCommand({
        RequestItems: {
          [TableName]: [
            { PutRequest: { Item: { pk: hot, sk: '3' } } },
            { PutRequest: { Item: { pk: cold, sk: '2' } } },
          ],
        },
      }),
    );
    expect(batch.UnprocessedItems?.[TableName]).toEqual([{ PutRequest: { Item: { pk: hot, sk: '3' } } }]);
    const written = await db.send(
      new GetCommand({ TableName, Key: { pk: cold, sk: '2' }, ConsistentRead: true }),
    );
    expect(written.Item).toBeDefined();
  });

  it('throttles reads of a hot partition, the table and the index alike', async () => {
    // 3,000 RCU/s ÷ 3,000: one read unit a second per partition.
    const slow = await layer({ DYNAMODB_PARTITION_DIVISOR: '3000', DYNAMODB_INDEX_LAG_MS: '0' });
    const db = documentClient(slow.endpoint);
    const pk = unique('read');
    await documentClient(dynamodb.endpoint).send(new PutCommand({ TableName, Item: item(pk) }));
    const get = () => db.send(new GetCommand({ TableName, Key: { pk, sk: 'item' }, ConsistentRead: true }));
    await get();
    expect(await rejection(get())).toBeInstanceOf(ProvisionedThroughputExceededException);
    const query = () =>
      db.send(
        new QueryCommand({
          TableName,
          IndexName: 'gsi1',
          KeyConditionExpression: 'gsi1pk = :p',
          ExpressionAttributeValues: { ':p': `${pk}#listing` },
        }),
      );
    await query();
    await query();
    const throttled = await rejection(query());
    expect(
      (throttled as unknown as ProvisionedThroughputExceededException).ThrottlingReasons?.[0]?.reason,
    ).toBe('IndexReadKeyRangeThroughputExceeded');
  });

  it('DYNAMODB_PARTITION_LIMITS=off: no throttling at the same divisor', async () => {
    const off = await layer({ DYNAMODB_PARTITION_DIVISOR: '1000', DYNAMODB_PARTITION_LIMITS: 'off' });
    const db = documentClient(off.endpoint);
    const hot = unique('hot');
    for (let i = 0; i < 5; i++)
      await db.send(new PutCommand({ TableName, Item: { pk: hot, sk: String(i) } }));
    expect(off.stats().throttles).toBe(0);
  });

  it('gives the client exactly the ConsumedCapacity it asked for', async () => {
    const on = await layer();
    const db = documentClient(on.endpoint);
    const direct = documentClient(dynamodb.endpoint);
    const pk = unique('capacity');
    await db.send(new PutCommand({ TableName, Item: item(pk) }));
    const get = (ReturnConsumedCapacity?: 'TOTAL' | 'INDEXES') =>
      new GetCommand({ TableName, Key: { pk, sk: 'item' }, ConsistentRead: true, ReturnConsumedCapacity });
    for (const asked of [undefined, 'TOTAL', 'INDEXES'] as const) {
      const [through, local] = await Promise.all([db.send(get(asked)), direct.send(get(asked))]);
      expect(through.ConsumedCapacity).toEqual(local.ConsumedCapacity);
      expect(through.Item).toEqual(local.Item);
    }
    const put = await db.send(new PutCommand({ TableName, Item: item(pk), ReturnConsumedCapacity: 'TOTAL' }));
    expect(Object.keys(put.ConsumedCapacity ?? {}).sort()).toEqual(['CapacityUnits', 'TableName']);
    const query = await db.send(
      new QueryCommand({
        TableName,
        KeyConditionExpression: 'pk = :p',
        ExpressionAttributeValues: { ':p': pk },
      }),
    );
    expect(query.ConsumedCapacity).toBeUndefined();
    expect(query.Count).toBe(1);
  });
});

describe('stale eventually consistent reads', () => {
  it('are off by default', async () => {
    const on = await layer();
    expect(on.config.staleReadsMs).toBe(0);
    const db = documentClient(on.endpoint);
    const pk = unique('fresh');
    await db.send(new PutCommand({ TableName, Item: item(pk) }));
    expect((await db.send(new GetCommand({ TableName, Key: { pk, sk: 'item' } }))).Item).toBeDefined();
  });

  it('DYNAMODB_STALE_READS_MS: an eventually consistent read misses a fresh write, a strongly consistent one sees it', async () => {
    const stale = await layer({ DYNAMODB_STALE_READS_MS: '300' });
    const db = documentClient(stale.endpoint);
    const pk = unique('fresh');
    await db.send(new PutCommand({ TableName, Item: item(pk) }));
    const Key = { pk, sk: 'item' };
    expect((await db.send(new GetCommand({ TableName, Key }))).Item).toBeUndefined();
    expect((await db.send(new GetCommand({ TableName, Key, ConsistentRead: true }))).Item).toBeDefined();
    const batch = await db.send(new BatchGetCommand({ RequestItems: { [TableName]: { Keys: [Key] } } }));
    expect(batch.Responses?.[TableName]).toEqual([]);
    const projected = new BatchGetCommand({
      RequestItems: { [TableName]: { Keys: [Key], ProjectionExpression: 'gsi1pk' } },
    });
    expect((await db.send(projected)).Responses?.[TableName]).toEqual([]);
    const query = await db.send(
      new QueryCommand({
        TableName,
        KeyConditionExpression: 'pk = :p',
        ExpressionAttributeValues: { ':p': pk },
      }),
    );
    expect(query.Count).toBe(0);
    await eventually(
      () => db.send(new GetCommand({ TableName, Key })),
      (answer) => answer.Item !== undefined,
      { timeoutMs: 3_000, intervalMs: 20 },
    );
    expect((await db.send(projected)).Responses?.[TableName]).toEqual([{ gsi1pk: `${pk}#listing` }]);
    expect(stale.stats().hiddenByStaleReads).toBeGreaterThanOrEqual(4);
  });
});

describe('the ledger (DYNAMODB_LEDGER)', () => {
  /** A partition's tally in a snapshot: the table's (index null) or an index's, by key value. */
  const partition = (snapshot: LedgerSnapshot | undefined, index: string | null, key: string) =>
    snapshot?.partitions.find((each) => each.index === index && each.key === key);

  it('is off by default: no ledger, and its path is not served', async () => {
    const plain = await layer();
    expect(plain.ledger).toBeUndefined();
    expect((await fetch(`${plain.endpoint}/__ledger`)).headers.get('content-type')).not.toBe(
      'application/json',
    );
  });

  it('records the units charged to each partition, and bills an index entry that moves as a delete on its old partition and a put on the new one, at the same price in a transaction (whose table writes and checks cost 2)', async () => {
    const on = await layer({ DYNAMODB_LEDGER: 'on' });
    const db = documentClient(on.endpoint);
    const pk = unique('ledger');
    const [open, closed, other] = [`${pk}#open`, `${pk}#closed`, unique('other')];
    await db.send(new PutCommand({ TableName, Item: { pk, sk: 'item', gsi1pk: open, gsi1sk: 'a' } }));
    await db.send(new PutCommand({ TableName, Item: { pk: other, sk: 'item' } }));
    on.ledger?.reset();

    await db.send(
      new UpdateCommand({
        TableName,
        Key: { pk, sk: 'item' },
        UpdateExpression: 'SET gsi1pk = :v',
        ExpressionAttributeValues: { ':v': closed },
      }),
    );
    let snapshot = on.ledger?.snapshot();
    expect(snapshot?.requests).toEqual({ UpdateItem: 1 });
    expect(partition(snapshot, null, pk)).toMatchObject({ writeUnits: 1, writes: 1 });
    // The layer's throttling sees only the partition the request names (closed); AWS also deletes
    // the entry from open.
    expect(partition(snapshot, 'gsi1', open)).toMatchObject({ writeUnits: 1, writes: 1 });
    expect(partition(snapshot, 'gsi1', closed)).toMatchObject({ writeUnits: 1, writes: 1 });

    // Back to open in a transaction that also checks another item: 2 units a table write or check,
    // 1 an index entry (AWS doubles only the table's units in a transaction).
    await db.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName,
              Key: { pk, sk: 'item' },
              UpdateExpression: 'SET gsi1pk = :v',
              ExpressionAttributeValues: { ':v': open },
            },
          },
          {
            ConditionCheck: {
              TableName,
              Key: { pk: other, sk: 'item' },
              ConditionExpression: 'attribute_exists(pk)',
            },
          },
        ],
      }),
    );
    // A write that changes nothing an entry holds costs the index nothing.
    await db.send(
      new UpdateCommand({
        TableName,
        Key: { pk, sk: 'item' },
        UpdateExpression: 'SET title = :t',
        ExpressionAttributeValues: { ':t': 'no index holds it' },
      }),
    );
    // A batch's put bills the entry it adds; a delete, the one it removes.
    const added = unique('ledger');
    await db.send(
      new BatchWriteCommand({
        RequestItems: {
          [TableName]: [{ PutRequest: { Item: { pk: added, sk: 'item', gsi1pk: closed, gsi1sk: 'b' } } }],
        },
      }),
    );
    await db.send(new DeleteCommand({ TableName, Key: { pk, sk: 'item' } }));
    snapshot = on.ledger?.snapshot();
    expect(partition(snapshot, null, pk)).toMatchObject({ writeUnits: 1 + 2 + 1 + 1, writes: 4 });
    expect(partition(snapshot, 'gsi1', open)).toMatchObject({ writeUnits: 1 + 1 + 1, writes: 3 });
    expect(partition(snapshot, 'gsi1', closed)).toMatchObject({ writeUnits: 1 + 1 + 1, writes: 3 });
    expect(partition(snapshot, null, other)).toMatchObject({ writeUnits: 2, writes: 1 });
    expect(snapshot?.items.filter((each) => each.transactions > 0)).toEqual(
      expect.arrayContaining([
        { table: TableName, pk, sk: 'item', transactions: 1, conflicts: 0 },
        { table: TableName, pk: other, sk: 'item', transactions: 1, conflicts: 0 },
      ]),
    );
    expect(snapshot?.lastWriteMs).toBeGreaterThan(0);

    // The same on the layer's endpoint: a snapshot, and one taken with a reset.
    const served = (await (await fetch(`${on.endpoint}/__ledger`)).json()) as LedgerSnapshot;
    expect(partition(served, 'gsi1', open)?.writeUnits).toBe(3);
    const taken = (await (
      await fetch(`${on.endpoint}/__ledger/reset`, { method: 'POST' })
    ).json()) as LedgerSnapshot;
    expect(taken.requests.TransactWriteItems).toBe(1);
    expect(on.ledger?.snapshot().partitions).toEqual([]);
  });

  it('counts refusals for throughput by partition, and still charges with the limits off', async () => {
    const limited = await layer({ DYNAMODB_LEDGER: 'charges', DYNAMODB_PARTITION_DIVISOR: '1000' });
    const db = documentClient(limited.endpoint);
    const hot = unique('hot');
    await db.send(new PutCommand({ TableName, Item: { pk: hot, sk: '1' } }));
    await rejection(db.send(new PutCommand({ TableName, Item: { pk: hot, sk: '2' } })));
    const snapshot = limited.ledger?.snapshot();
    expect(snapshot?.mode).toBe('charges');
    expect(partition(snapshot, null, hot)).toMatchObject({ writeUnits: 1, writes: 1, throttles: 1 });
    expect(snapshot?.throttles).toBe(1);

    const unlimited = await layer({ DYNAMODB_LEDGER: 'charges', DYNAMODB_PARTITION_LIMITS: 'off' });
    const free = documentClient(unlimited.endpoint);
    for (const sk of ['1', '2', '3']) await free.send(new PutCommand({ TableName, Item: { pk: hot, sk } }));
    expect(partition(unlimited.ledger?.snapshot(), null, hot)).toMatchObject({ writeUnits: 3, throttles: 0 });
    expect(() => readSemanticsConfig({ DYNAMODB_LEDGER: 'maybe' })).toThrow(/DYNAMODB_LEDGER=maybe/);
  });
});

describe('the layer as the stack starts it', () => {
  const fake = (endpoint: string) => {
    const stopped: string[] = [];
    const emulator: RunningEmulator = {
      name: 'DynamoDB Local',
      endpoint,
      stop: async () => {
        stopped.push('stop');
      },
      kill: async () => {
        stopped.push('kill');
      },
    };
    return { emulator, stopped };
  };

  it('DYNAMODB_AWS_SEMANTICS=off leaves DynamoDB Local as it is', async () => {
    const { emulator } = fake(dynamodb.endpoint);
    expect(await withAwsSemantics(async () => emulator, { DYNAMODB_AWS_SEMANTICS: 'off' })).toBe(emulator);
  });

  it('puts the layer in front; stopping or killing it ends both', async () => {
    const { emulator, stopped } = fake(dynamodb.endpoint);
    const running = await withAwsSemantics(async () => emulator, {});
    expect(running.endpoint).not.toBe(dynamodb.endpoint);
    expect(running.name).toContain('index lag 300 ms');
    const db = documentClient(running.endpoint);
    const pk = unique('wired');
    await db.send(new PutCommand({ TableName, Item: item(pk) }));
    expect((await db.send(new GetCommand({ TableName, Key: { pk, sk: 'item' } }))).Item?.pk).toBe(pk);
    await running.kill?.();
    expect(stopped).toEqual(['kill']);
    await expect(db.send(new GetCommand({ TableName, Key: { pk, sk: 'item' } }))).rejects.toThrow();
  });

  it('refuses a value it cannot read before starting anything', async () => {
    let started = false;
    await expect(
      withAwsSemantics(
        async () => {
          started = true;
          return fake(dynamodb.endpoint).emulator;
        },
        { DYNAMODB_CONFLICTS: 'maybe' },
      ),
    ).rejects.toThrow('DYNAMODB_CONFLICTS=maybe: expected on or off');
    expect(started).toBe(false);
    expect(() => readSemanticsConfig({ DYNAMODB_INDEX_LAG_MS: '-1' })).toThrow(/DYNAMODB_INDEX_LAG_MS/);
  });

  it('passes DynamoDB Streams calls through untouched', async () => {
    const on = await layer();
    const streams = new DynamoDBStreamsClient({
      endpoint: on.endpoint,
      region: 'us-east-1',
      credentials: CREDENTIALS,
      maxAttempts: 1,
    });
    const { Streams } = await streams.send(new ListStreamsCommand({ TableName }));
    streams.destroy();
    expect(Streams?.[0]?.TableName).toBe(TableName);
  });
});

describe('the ConsumedCapacity cut out of an answer', () => {
  const cc =
    '{"TableName":"t","CapacityUnits":1.5,"Table":{"CapacityUnits":0.5},"GlobalSecondaryIndexes":{"g":{"CapacityUnits":1.0}}}';

  it("takes the answer's own trailing report, not an attribute of the same name, and leaves the rest byte for byte", () => {
    const items = '{"Items":[{"ConsumedCapacity":{"S":"x"},"pk":{"S":"a"}}],"Count":1,"ScannedCount":1';
    const settled = settleBytes(Buffer.from(`${items},"ConsumedCapacity":${cc}}`), 'TOTAL');
    expect(settled?.consumed).toEqual(JSON.parse(cc));
    expect(settled?.body.toString()).toBe(
      `${items},"ConsumedCapacity":{"TableName":"t","CapacityUnits":1.5}}`,
    );
    expect(settleBytes(Buffer.from(`${items},"ConsumedCapacity":${cc}}`), undefined)?.body.toString()).toBe(
      `${items}}`,
    );
    expect(settleBytes(Buffer.from(`{"ConsumedCapacity":${cc}}`), undefined)?.body.toString()).toBe('{}');
  });

  it('declines an answer whose report is not last (it is parsed instead)', () => {
    expect(settleBytes(Buffer.from(`{"ConsumedCapacity":[${cc}],"Responses":[]}`), 'TOTAL')).toBeUndefined();
    expect(
      settleBytes(Buffer.from('{"Items":[{"ConsumedCapacity":{"M":{}}}],"Count":1}'), 'TOTAL'),
    ).toBeUndefined();
  });
});
