import { tableDefinition } from './table';

const storageAttributes = new Set<string>([
  tableDefinition.partitionKey,
  tableDefinition.sortKey,
  ...tableDefinition.globalIndexes.flatMap((index) => [index.partitionKey, index.sortKey]),
  tableDefinition.timeToLiveAttribute,
  'entity',
]);

/** The record without its storage attributes (keys, index keys, TTL, entity tag). */
export function recordOf<T>(item: Record<string, unknown>): T {
  const record: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(item)) {
    if (!storageAttributes.has(name)) record[name] = value;
  }
  return record as T;
}
