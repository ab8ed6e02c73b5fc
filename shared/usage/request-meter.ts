import { randomUUID } from 'node:crypto';
import { dayOf } from '../analytics/days';
import { config } from '../config';
import { logger } from '../logger';
import type { UsageCounter } from './usage';

/**
 * What each organization's requests to this function instance were, kept in memory and written
 * together at most once per `USAGE_FLUSH_MS`: one transaction adds every organization's counts of
 * the interval to its day's usage, on the shard of this instance. Nothing is written in a request's
 * own transaction, and no item is written per request. Exactly once: the transaction's
 * ClientRequestToken makes the SDK's retry of a send whose answer was lost a no-op, and counts
 * whose write failed stay pending for the next flush.
 */

/** One function instance, for the life of its process: the shard its flushes land on. */
const instanceId = randomUUID();

type Counts = Partial<Record<UsageCounter, number>>;

/** Pending counts by organization and day. */
const pending = new Map<string, { orgId: string; day: string; counts: Counts }>();
let lastFlushMs = 0;
/** A flush is scheduled for the counts pending (one timer at a time). */
let scheduled = false;
let flushing: Promise<void> | undefined;

const add = (counts: Counts, name: UsageCounter, amount: number) => {
  if (amount !== 0) counts[name] = (counts[name] ?? 0) + amount;
};

export interface MeteredRequest {
  orgId: string;
  /** The operation id of the route answered. */
  route: string;
  status: number;
  readUnits: number;
  writeUnits: number;
  nowMs: number;
}

/** The operations whose answered requests are searches. */
const SEARCH_ROUTES: ReadonlySet<string> = new Set(['searchConversations']);

/** Counts one answered request of an organization. */
export function meterRequest(request: MeteredRequest): void {
  const day = dayOf(new Date(request.nowMs).toISOString());
  const id = `${request.orgId}#${day}`;
  let entry = pending.get(id);
  if (!entry) {
    entry = { orgId: request.orgId, day, counts: {} };
    pending.set(id, entry);
  }
  const { counts } = entry;
  const { status } = request;
  add(counts, 'req', 1);
  add(counts, 'req4', status >= 400 && status < 500 && status !== 429 ? 1 : 0);
  add(counts, 'req429', status === 429 ? 1 : 0);
  add(counts, 'req5', status >= 500 ? 1 : 0);
  add(counts, 'rcu', request.readUnits);
  add(counts, 'wcu', request.writeUnits);
  add(counts, 'srch', SEARCH_ROUTES.has(request.route) && status < 300 ? 1 : 0);
  scheduleFlush();
}

/**
 * A quiet instance still writes what it counted within the interval (while it runs: Lambda freezes
 * it between requests, and the next request's `flushUsageIfDue` catches up).
 */
function scheduleFlush(): void {
  if (scheduled) return;
  scheduled = true;
  setTimeout(() => {
    scheduled = false;
    void flushUsage();
  }, config.usageFlushMs).unref();
}

/** Writes the pending counts when the last write is an interval old: at most one write per interval. */
export async function flushUsageIfDue(nowMs: number): Promise<void> {
  if (pending.size === 0 || nowMs - lastFlushMs < config.usageFlushMs) return;
  await flushUsage();
}

/** A transaction holds 100 actions: one per organization and day. */
const MAX_ACTIONS = 100;

/** Writes every pending count now (one transaction per 100 organization-days). */
export function flushUsage(): Promise<void> {
  flushing ??= writePending().finally(() => {
    flushing = undefined;
  });
  return flushing;
}

async function writePending(): Promise<void> {
  if (pending.size === 0) return;
  lastFlushMs = Date.now();
  const taken = [...pending.values()];
  pending.clear();
  for (let start = 0; start < taken.length; start += MAX_ACTIONS) {
    const chunk = taken.slice(start, start + MAX_ACTIONS);
    try {
      // Loaded at the first flush: the transaction helper stays off every function's cold path.
      const { writeUsageCounts } = await import('../db/usage');
      await writeUsageCounts(instanceId, chunk);
    } catch (error) {
      // Kept for the next flush: counted late rather than lost.
      logger.warn('usage: metered requests not written, kept for the next flush', {
        error: error as Error,
        organizationDays: chunk.length,
      });
      for (const entry of chunk) restore(entry);
      scheduleFlush();
    }
  }
}

function restore(entry: { orgId: string; day: string; counts: Counts }): void {
  const id = `${entry.orgId}#${entry.day}`;
  const current = pending.get(id);
  if (!current) pending.set(id, entry);
  else
    for (const [name, amount] of Object.entries(entry.counts))
      add(current.counts, name as UsageCounter, amount);
}
