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

/**
 * One page of an incremental sync over an index sorted by `<updatedAt>#<id>`: entries after the
 * cursor's sort key (or from `since`), up to the settled end (changes older than SYNC_SETTLE_MS), so
 * a change committed late is never passed by a cursor. The cursor holds the last sort key served:
 * an entry that changes again moves past it and is served again, nothing else is.
 */
export async function syncPage(
  orgId: string,
  queryId: string,
  options: {
    partition: { index: string; pk: string };
    since: string;
    cursor: string | undefined;
    limit: number;
  },
): Promise<{ entries: Record<string, unknown>[]; nextCursor: string; done: boolean }> {
  const n = options.partition.index.slice(-1);
  const after = options.cursor ? String(decodeCursor(options.cursor, orgId, queryId).after ?? '') : undefined;
  // ' ' sorts below every character of a sort key, so `after + ' '` is the first key past `after`.
  const from = after !== undefined ? `${after} ` : options.since;
  const settled = new Date(clock.nowMs() - SYNC_SETTLE_MS).toISOString();
  const entries: Record<string, unknown>[] = [];
  let done = true;
  if (from < settled) {
    const { Items = [], LastEvaluatedKey } = await db.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: options.partition.index,
        KeyConditionExpression: `gsi${n}pk = :pk AND gsi${n}sk BETWEEN :from AND :to`,
        ExpressionAttributeValues: { ':pk': options.partition.pk, ':from': from, ':to': settled },
        ScanIndexForward: true,
        Limit: options.limit,
      }),
    );
    entries.push(...Items);
    done = LastEvaluatedKey === undefined && Items.length < options.limit;
  }
  const lastKey = entries.at(-1)?.[`gsi${n}sk`];
  const position = lastKey !== undefined ? String(lastKey) : (after ?? options.since);
  return { entries, nextCursor: encodeCursor(orgId, queryId, { after: position }), done };
}
