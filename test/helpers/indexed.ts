import { eventually } from './eventually';

/**
 * How long a test waits for what a global secondary index serves to show a write: the contract
 * lets listings, exports, searches and counts read through an index show it up to 2 s later
 * ("Consistency as DynamoDB gives it"; locally the DynamoDB semantics layer lags its indexes
 * `DYNAMODB_INDEX_LAG_MS`, 300 ms), and a loaded machine needs some room beyond.
 */
export const INDEX_LAG_TIMEOUT_MS = 3_000;

/**
 * Reads an index-backed answer (a listing, a count read through an index) until `done` holds or
 * INDEX_LAG_TIMEOUT_MS has passed, and returns the last answer: the test then asserts on it exactly
 * as it would on an answer read at once. Only for reads the contract allows to lag: a write's own
 * answer, a read by id and the counters a resource carries are asserted without waiting.
 */
export function eventuallyIndexed<T>(read: () => Promise<T> | T, done: (value: T) => boolean): Promise<T> {
  return eventually(read, done, { timeoutMs: INDEX_LAG_TIMEOUT_MS, intervalMs: 100 });
}

/** Whether two id lists are the same, in order (a `done` for listings asserted with toEqual). */
export const sameIds = (actual: readonly unknown[], expected: readonly unknown[]): boolean =>
  actual.length === expected.length && actual.every((id, i) => id === expected[i]);
