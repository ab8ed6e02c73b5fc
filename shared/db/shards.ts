/**
 * Spreading one organization's append-only partitions over several partition key values, so that no
 * single partition of the table or of an index takes every write of a busy tenant (AWS gives a
 * partition ~1,000 write units per second). The figures behind each count are in docs/data-model.md,
 * "Hot partitions and limits".
 */

/** Partitions of the organization's events (`ORG#o#EVENTS#<n>`), merged by id when read. */
export const EVENT_SHARDS = 4;

/**
 * Partitions of each conversation listing that moves with every message (by status, by operator,
 * by `updatedAt`): `…#<n>`, merged by sort key when read. Four keep a post's ~2 units per index at
 * ~0.5 a partition (~2,000 posts/s, as the events' 4), while an organization listing reads 16
 * partitions a page (8 shards doubled that for no ceiling the tenant needs).
 */
export const LISTING_SHARDS = 4;

/** Partitions of the organization's realtime notices (`ORG#o#REALTIME#<n>`), read by key only. */
export const REALTIME_SHARDS = 4;

/** FNV-1a of `value`, reduced to `0..shards-1`: the same value always lands on the same shard. */
export function shardOf(value: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < value.length; i++) {
    hash ^= value.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % shards;
}

/** Every shard number of a partition spread over `shards`. */
export const allShards = (shards: number): number[] => Array.from({ length: shards }, (_, i) => i);
