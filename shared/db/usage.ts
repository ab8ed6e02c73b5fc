import { addCounters, emptyUsage, STORED_DELTA, type Usage, type UsageCounter } from '../usage/usage';
import { tableName } from './client';
import { type Increment, incrementWrites } from './increments';
import { keys } from './keys';
import { queryAll, readDayRange } from './query';
import { shardOf } from './shards';
import { RetryBudget, transact } from './transaction';

/**
 * Where an organization's usage is kept, and how it is read back. Two kinds of writer add to it,
 * never a request's own transaction: the table stream's consumer (what the stream shows: records
 * counted once each, shared/db/usage-stream.ts) and each function instance's flush of what it
 * answered (shared/usage/request-meter.ts). See docs/data-model.md, "Usage".
 */

/**
 * Items per organization and day. Every function instance of the fleet flushes into one of them
 * (by its id) and the stream's consumers into another (by the record's key): spread over 8, two
 * writers rarely meet on one item, and a 366-day read stays near 3,000 small items.
 */
export const USAGE_SHARDS = 8;

/** Increments of a day's usage counters, on the shard `seed` picks. */
export function usageIncrement(
  orgId: string,
  day: string,
  seed: string,
  add: Partial<Record<UsageCounter, number>>,
): Increment {
  return {
    key: keys.usageShard(orgId, day, shardOf(seed, USAGE_SHARDS)),
    add: add as Record<string, number>,
    fields: { entity: 'usage', day },
    group: `${orgId}#USAGE#${day}`,
  };
}

/** Upload bytes added (+) or removed (−) on a day: the stored bytes move by that much. */
export function storedBytesIncrement(orgId: string, day: string, bytes: number): Increment {
  return {
    key: keys.usageStored(orgId, day),
    add: { [STORED_DELTA]: bytes },
    fields: { entity: 'usage', day },
  };
}

/** A flush may run at the end of a request: it gives up early, its counts kept for the next one. */
const FLUSH_BUDGET_MS = 300;

/**
 * A function instance's metered counts, one organization-day per action, in one transaction on the
 * instance's shard: its ClientRequestToken makes a retried send of a committed flush a no-op.
 */
export async function writeUsageCounts(
  instanceId: string,
  entries: readonly { orgId: string; day: string; counts: Partial<Record<UsageCounter, number>> }[],
): Promise<void> {
  await transact(
    incrementWrites(entries.map((entry) => usageIncrement(entry.orgId, entry.day, instanceId, entry.counts))),
    { budget: new RetryBudget(FLUSH_BUDGET_MS) },
  );
}

/** What `readUsage` returns: each day's counters, and the stored-bytes changes up to the window's end. */
export interface UsageDays {
  /** Days with any counter (absent: all zero). */
  counters: Map<string, Usage>;
  /** Per day, bytes of uploads added less bytes removed, every day up to the last one read. */
  storedDeltas: Map<string, number>;
}

/**
 * The organization's usage for the days `from`..`to` (both included): the counter shards summed per
 * day (one Query per 92 days, in parallel), and every stored-bytes change from the first up to
 * `to` (uploads are few: a day has an item only when uploads completed or went). Eventually
 * consistent: usage shows within seconds anyway (the contract allows 60).
 */
export async function readUsage(orgId: string, from: string, to: string): Promise<UsageDays> {
  const pk = keys.usagePartition(orgId);
  const [stored, days] = await Promise.all([
    // '~' sorts after every character of the rest of a key: the whole last day.
    queryAll({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': pk,
        ':from': keys.usageStoredPrefix,
        ':to': `${keys.usageStoredPrefix}${to}~`,
      },
    }),
    readDayRange(pk, keys.usageDayPrefix, from, to),
  ]);
  const counters = new Map<string, Usage>();
  for (const item of days) {
    const day = String(item.day);
    let usage = counters.get(day);
    if (!usage) {
      usage = emptyUsage();
      counters.set(day, usage);
    }
    addCounters(usage, item);
  }
  const storedDeltas = new Map<string, number>();
  for (const item of stored) {
    const delta = item[STORED_DELTA];
    if (typeof delta === 'number') storedDeltas.set(String(item.day), delta);
  }
  return { counters, storedDeltas };
}
