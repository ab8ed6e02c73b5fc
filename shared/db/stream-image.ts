import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';

/**
 * An item image of a stream record as plain values. Values that do not convert (an empty attribute
 * value, as DynamoDB Local's stream shows some binary ones and empty maps) are left out, at any
 * depth, rather than failing the record: the stream's consumers read none of them.
 */
export function imageOf(image: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!image) return undefined;
  const attributes = image as Record<string, AttributeValue>;
  try {
    return unmarshall(attributes);
  } catch {
    return unmarshall(convertible(attributes) as Record<string, AttributeValue>);
  }
}

const TYPES = new Set(['S', 'N', 'B', 'SS', 'NS', 'BS', 'M', 'L', 'NULL', 'BOOL']);

/**
 * The attributes without the values that do not convert, at any depth: an empty map inside a map
 * (an export's `filters: {}` in its audit entry) must not take its siblings (the row count) with it.
 */
function convertible(attributes: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(attributes)) {
    const converted = convertibleValue(value);
    if (converted !== undefined) kept[name] = converted;
  }
  return kept;
}

function convertibleValue(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return undefined;
  const entries = Object.entries(value);
  const [type, inner] = entries[0] ?? [];
  if (entries.length !== 1 || type === undefined || !TYPES.has(type)) return undefined;
  if (type === 'M')
    return typeof inner === 'object' && inner !== null
      ? { M: convertible(inner as Record<string, unknown>) }
      : undefined;
  if (type === 'L')
    return Array.isArray(inner)
      ? { L: inner.map(convertibleValue).filter((item) => item !== undefined) }
      : undefined;
  try {
    unmarshall({ value: value as AttributeValue });
    return value;
  } catch {
    return undefined;
  }
}
