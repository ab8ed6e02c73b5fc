/**
 * When each item was last written through the layer, for what AWS propagates asynchronously:
 * global secondary indexes (Developer Guide, "Global secondary indexes": eventually consistent,
 * a write usually shows within a second) and, opt-in, eventually consistent reads of the table
 * ("DynamoDB read consistency"). DynamoDB Local updates both synchronously.
 *
 * Approximation: a read that should not see a write yet drops the item, where AWS would still show
 * its previous version (or, for an index, its previous entry).
 */
import { type Item, itemKey, type TableSchema } from './keys';

export class RecentWrites {
  /** Per table, item key → time of its last write, oldest first (a write moves its key to the end). */
  private readonly tables = new Map<string, Map<string, number>>();

  /** `horizonMs`: the longest a write matters (the larger of the index lag and the stale-read window). */
  constructor(private readonly horizonMs: number) {}

  get enabled(): boolean {
    return this.horizonMs > 0;
  }

  record(table: string, key: string, now: number): void {
    if (!this.enabled) return;
    let writes = this.tables.get(table);
    if (!writes) {
      writes = new Map();
      this.tables.set(table, writes);
    }
    writes.delete(key);
    writes.set(key, now);
    this.expire(writes, now);
  }

  /** Whether any item of the table was written within the horizon (else reads need no look). */
  any(table: string, now: number): boolean {
    const writes = this.tables.get(table);
    if (!writes) return false;
    this.expire(writes, now);
    return writes.size > 0;
  }

  /** Whether the item was written less than `ms` ago. */
  within(table: string, key: string, ms: number, now: number): boolean {
    const at = this.tables.get(table)?.get(key);
    return at !== undefined && now - at < ms;
  }

  private expire(writes: Map<string, number>, now: number): void {
    for (const [key, at] of writes) {
      if (now - at < this.horizonMs) break;
      writes.delete(key);
    }
  }
}

/**
 * Drops from `items` those written less than `ms` ago; returns how many were dropped. Items of an
 * index always carry the table's key attributes, so each is told by its table key.
 */
export function dropRecent(
  recent: RecentWrites,
  schema: TableSchema,
  items: Item[],
  ms: number,
  now: number,
): { kept: Item[]; dropped: number } {
  const kept: Item[] = [];
  for (const item of items) {
    const key = itemKey(schema, item);
    if (key !== undefined && recent.within(schema.name, key, ms, now)) continue;
    kept.push(item);
  }
  return { kept, dropped: items.length - kept.length };
}

interface Projected {
  ProjectionExpression?: string;
  AttributesToGet?: string[];
  ExpressionAttributeNames?: Record<string, string>;
  [other: string]: unknown;
}

/**
 * A read that names its attributes, made to return the table's key attributes as well (each item is
 * told by them); `added` lists those the client did not ask for, to take out of the answer again.
 */
export function withKeyAttributes<T extends Projected>(
  read: T,
  schema: TableSchema,
): { read: T; added: string[] } {
  const keys = [schema.hash, schema.range].filter((name): name is string => Boolean(name));
  if (typeof read.ProjectionExpression === 'string') {
    const names = read.ExpressionAttributeNames ?? {};
    const named = new Set(
      read.ProjectionExpression.split(',').map((path) => {
        const top = path.trim().split(/[.[]/)[0] ?? '';
        return top.startsWith('#') ? (names[top] ?? top) : top;
      }),
    );
    const added = keys.filter((name) => !named.has(name));
    if (!added.length) return { read, added };
    const extended = { ...names };
    const placeholders = added.map((name, i) => {
      extended[`#semanticsKey${i}`] = name;
      return `#semanticsKey${i}`;
    });
    return {
      read: {
        ...read,
        ProjectionExpression: [read.ProjectionExpression, ...placeholders].join(', '),
        ExpressionAttributeNames: extended,
      },
      added,
    };
  }
  if (Array.isArray(read.AttributesToGet)) {
    const added = keys.filter((name) => !read.AttributesToGet?.includes(name));
    return added.length
      ? { read: { ...read, AttributesToGet: [...read.AttributesToGet, ...added] }, added }
      : { read, added };
  }
  return { read, added: [] };
}

/** Takes the attributes `withKeyAttributes` added out of the items again. */
export function removeAdded(items: Item[], added: readonly string[]): void {
  if (!added.length) return;
  for (const item of items) for (const name of added) delete item[name];
}
