import { tableName } from './client';
import type { Key } from './keys';
import type { Write } from './transaction';
import { updateExpression } from './update-expression';

/**
 * Atomic counters moved by ADD inside a transaction: the write that moves them, or for the daily
 * aggregates the stream consumer's, beside the markers that make a redelivered record count once
 * (stats-stream.ts).
 */
export interface Increment {
  key: Key;
  /** Attribute → amount to ADD (negative subtracts); a zero is not written. */
  add: Readonly<Record<string, number>>;
  /** Attributes every write of the item sets to the same values (its `entity`, what it is about). */
  fields?: Readonly<Record<string, string>>;
  /**
   * Items of one group are interchangeable (the shards of one day's counters, which reads sum): a
   * transaction adds all of a group's increments to one of them, the first named, so a bulk chunk
   * touching many conversations still costs one action per day.
   */
  group?: string;
}

const itemId = (key: Key) => `${key.pk}\u0000${key.sk}`;

interface Merged {
  key: Key;
  add: Record<string, number>;
  fields: Record<string, string>;
}

/**
 * The Update actions for `increments`: one per item (DynamoDB refuses two actions on one item in a
 * transaction), increments of one item or group summed, nothing for those that add up to zero.
 */
export function incrementWrites(increments: readonly Increment[]): Write[] {
  const groupTargets = new Map<string, Key>();
  const merged = new Map<string, Merged>();
  for (const increment of increments) {
    let key = increment.key;
    if (increment.group !== undefined) {
      const target = groupTargets.get(increment.group);
      if (target) key = target;
      else groupTargets.set(increment.group, key);
    }
    const id = itemId(key);
    let entry = merged.get(id);
    if (!entry) {
      entry = { key, add: {}, fields: {} };
      merged.set(id, entry);
    }
    Object.assign(entry.fields, increment.fields);
    for (const [name, amount] of Object.entries(increment.add))
      entry.add[name] = (entry.add[name] ?? 0) + amount;
  }
  return [...merged.values()].flatMap((entry): Write[] => {
    const adds = Object.entries(entry.add).filter(([, amount]) => amount !== 0);
    if (adds.length === 0) return [];
    return [
      {
        action: {
          Update: {
            TableName: tableName,
            Key: entry.key,
            ...updateExpression({ set: entry.fields, add: Object.fromEntries(adds) }),
          },
        },
      },
    ];
  });
}
