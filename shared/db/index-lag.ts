import { clock } from '../clock';

/**
 * How long after a write a global secondary index may still not show it. AWS updates indexes
 * asynchronously and names no bound (a write "usually" shows within a second); the contract promises
 * listings within 2 s, so the service rests on that bound. A read that must see everything written
 * before some moment (an erasure's or a merge's last pass) reads its index at least this long after
 * that moment. Locally the DynamoDB semantics layer lags its indexes 300 ms (DYNAMODB_INDEX_LAG_MS).
 */
export const INDEX_LAG_MS = 2_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether every index shows what was written at `writtenAtMs` (epoch ms, service clock) by now. */
export function indexed(writtenAtMs: number): boolean {
  return clock.nowMs() - writtenAtMs >= INDEX_LAG_MS;
}

/**
 * Waits until every index shows what was written at `writtenAtMs`: at most INDEX_LAG_MS, even when
 * that moment lies ahead (a clock moved back), so a caller never waits longer than the lag itself.
 */
export async function untilIndexed(writtenAtMs: number): Promise<void> {
  const wait = Math.min(INDEX_LAG_MS, writtenAtMs + INDEX_LAG_MS - clock.nowMs());
  if (wait > 0) await sleep(wait);
}
