import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  BatchWriteCommand,
  type BatchWriteCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import { backoff } from './transaction';

type Key = Record<string, unknown>;
type Item = Record<string, unknown>;

/** BatchGetItem reads at most 100 keys per call; BatchWriteItem writes at most 25 items. */
const GET_LIMIT = 100;
const WRITE_LIMIT = 25;
/** Unprocessed keys or items (throttling) are asked for again this many times, with backoff. */
const MAX_ROUNDS = 8;

function chunks<T>(values: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < values.length; i += size) out.push(values.slice(i, i + size));
  return out;
}

/**
 * Every item found under `keys`, in no particular order, in ⌈n/100⌉ parallel calls. Keys DynamoDB
 * leaves unprocessed are asked for again; missing items are simply absent. `projection` names the
 * attributes to return (the read units are those of the whole items all the same).
 */
export async function batchGet(
  keys: readonly Key[],
  options: { consistent: boolean; projection?: readonly string[] },
): Promise<Item[]> {
  const projected = options.projection?.length
    ? {
        ProjectionExpression: options.projection.map((_, i) => `#p${i}`).join(', '),
        ExpressionAttributeNames: Object.fromEntries(options.projection.map((name, i) => [`#p${i}`, name])),
      }
    : {};
  const found: Item[] = [];
  await Promise.all(
    chunks(keys, GET_LIMIT).map(async (chunk) => {
      let request: Key[] | undefined = chunk;
      for (let round = 0; request?.length; round++) {
        if (round >= MAX_ROUNDS) throw new Error(`BatchGetItem left ${request.length} keys unprocessed`);
        if (round > 0) await backoff(round);
        const output: BatchGetCommandOutput = await db.send(
          new BatchGetCommand({
            RequestItems: {
              [tableName]: { Keys: request, ConsistentRead: options.consistent, ...projected },
            },
          }),
        );
        found.push(...(output.Responses?.[tableName] ?? []));
        request = output.UnprocessedKeys?.[tableName]?.Keys;
      }
    }),
  );
  return found;
}

type WriteRequest = { PutRequest?: { Item: Item | undefined }; DeleteRequest?: { Key: Key | undefined } };

/** Sends write requests in ⌈n/25⌉ parallel calls, again for what stays unprocessed; throws past the rounds. */
async function batchWrite(requests: readonly WriteRequest[]): Promise<void> {
  await Promise.all(
    chunks(requests, WRITE_LIMIT).map(async (chunk) => {
      let request: WriteRequest[] | undefined = chunk;
      for (let round = 0; request?.length; round++) {
        if (round >= MAX_ROUNDS) throw new Error(`BatchWriteItem left ${request.length} writes unprocessed`);
        if (round > 0) await backoff(round);
        const output: BatchWriteCommandOutput = await db.send(
          new BatchWriteCommand({ RequestItems: { [tableName]: request } }),
        );
        request = output.UnprocessedItems?.[tableName];
      }
    }),
  );
}

/**
 * Puts every item, unconditionally, in ⌈n/25⌉ parallel calls: for records whose writer is their
 * only author, where a condition would buy nothing. Throws when items stay unprocessed.
 */
export function batchPut(items: readonly Item[]): Promise<void> {
  return batchWrite(items.map((Item) => ({ PutRequest: { Item } })));
}

/** Deletes every key, in ⌈n/25⌉ parallel calls; deleting a missing item is a no-op. */
export function batchDelete(keys: readonly Key[]): Promise<void> {
  return batchWrite(keys.map((Key) => ({ DeleteRequest: { Key } })));
}
