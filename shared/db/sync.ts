import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import { db, tableName } from './client';
import { decodeCursor, encodeCursor } from './cursor';

/**
 * Changes an incremental sync serves only once they are this old. A change's sort key is its
 * `updatedAt`, taken when the write is built: it commits within the request's retry budget
 * (RETRY_BUDGET_MS and one last send), and then reaches the index, which in AWS lags its table
 * (usually well under a second). The contract allows a change to appear up to 5 s after its commit.
 */
export const SYNC_SETTLE_MS = 3_500;

/** A partition an incremental sync reads: its index and its partition key value. */
export interface SyncPartition {
  index: string;
  pk: string;
}

type Entry = Record<string, unknown>;

/**
 * One page of an incremental sync over an index sorted by `<updatedAt>#<id>`: entries after the
 * cursor's sort key (or from `since`), up to the settled end (changes older than SYNC_SETTLE_MS), so
 * a change committed late is never passed by a cursor. The cursor holds the last sort key served:
 * an entry that changes again moves past it and is served again, nothing else is.
 *
 * A listing spread over shards (`partitions`, one Query each, in parallel) is merged ascending: a
 * shard read up to its `limit` (or its 1 MB page) is known only that far, so the page stops at the
 * lowest such point and every shard resumes from the same sort key. `done` only when every shard
 * was read to the settled end and all of it served.
 */
export async function syncPage(
  orgId: string,
  queryId: string,
  options: {
    partitions: readonly SyncPartition[];
    since: string;
    cursor: string | undefined;
    limit: number;
  },
): Promise<{ entries: Entry[]; nextCursor: string; done: boolean }> {
  const after = options.cursor ? String(decodeCursor(options.cursor, orgId, queryId).after ?? '') : undefined;
  // ' ' sorts below every character of a sort key, so `after + ' '` is the first key past `after`.
  const from = after !== undefined ? `${after} ` : options.since;
  const settled = new Date(clock.nowMs() - SYNC_SETTLE_MS).toISOString();
  const cursorAt = (key: string | undefined) =>
    encodeCursor(orgId, queryId, { after: key ?? after ?? options.since });
  if (from >= settled) return { entries: [], nextCursor: cursorAt(undefined), done: true };
  const reads = await Promise.all(
    options.partitions.map(async (partition) => {
      const n = partition.index.slice(-1);
      const sortKey = `gsi${n}sk`;
      const { Items = [], LastEvaluatedKey } = await db.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: partition.index,
          KeyConditionExpression: `gsi${n}pk = :pk AND ${sortKey} BETWEEN :from AND :to`,
          ExpressionAttributeValues: { ':pk': partition.pk, ':from': from, ':to': settled },
          ScanIndexForward: true,
          Limit: options.limit,
        }),
      );
      const ended = LastEvaluatedKey === undefined && Items.length < options.limit;
      const readTo = LastEvaluatedKey?.[sortKey] ?? Items.at(-1)?.[sortKey];
      return {
        found: Items.map((entry) => ({ entry, key: String(entry[sortKey]) })),
        readTo: ended || readTo === undefined ? undefined : String(readTo),
      };
    }),
  );
  // Past the lowest point a shard was read to, more of that shard may follow: the page stops there.
  const horizon = reads
    .flatMap((read) => (read.readTo === undefined ? [] : [read.readTo]))
    .reduce<string | undefined>((low, key) => (low === undefined || key < low ? key : low), undefined);
  const merged = reads
    .flatMap((read) => read.found)
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const served = merged
    .filter((candidate) => horizon === undefined || candidate.key <= horizon)
    .slice(0, options.limit);
  return {
    entries: served.map((candidate) => candidate.entry),
    nextCursor: cursorAt(served.at(-1)?.key),
    done: horizon === undefined && served.length === merged.length,
  };
}
