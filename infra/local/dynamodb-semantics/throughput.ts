/**
 * Partition throughput as AWS enforces it in on-demand mode too (Developer Guide, "Best practices
 * for designing and using partition keys effectively", and the throttling guide's "Key range
 * throughput exceeded"): each partition of the table and of each global secondary index serves at
 * most 3,000 RCU/s and 1,000 WCU/s. Here a partition is one partition key value (AWS may put several
 * values in one partition, and splits a hot one: this is the limit of a single value, which AWS
 * cannot split further). Token buckets of one second, refilled continuously; a request is admitted
 * while its partitions have at least its smallest possible cost left, and is charged what it really
 * consumed once DynamoDB Local answers (so a burst may overdraw a bucket, and waits it out).
 */
import { type AttributeValue, valueString } from './keys';

export type Capacity = 'read' | 'write';

interface Bucket {
  tokens: number;
  at: number;
}

export class PartitionThroughput {
  private readonly buckets = new Map<string, Bucket>();
  private readonly rates: Record<Capacity, number>;

  constructor(readPerSecond: number, writePerSecond: number) {
    this.rates = { read: readPerSecond, write: writePerSecond };
  }

  private refill(id: string, kind: Capacity, now: number): Bucket | undefined {
    const bucket = this.buckets.get(id);
    if (!bucket) return undefined;
    const rate = this.rates[kind];
    bucket.tokens = Math.min(rate, bucket.tokens + ((now - bucket.at) / 1000) * rate);
    bucket.at = now;
    return bucket;
  }

  /** Whether the partition has `minimum` units left (a whole bucket always admits one request). */
  admits(partition: string, kind: Capacity, minimum: number, now: number): boolean {
    const bucket = this.refill(`${kind}\u0000${partition}`, kind, now);
    if (!bucket) return true;
    return bucket.tokens >= Math.min(minimum, this.rates[kind]);
  }

  charge(partition: string, kind: Capacity, units: number, now: number): void {
    if (!(units > 0)) return;
    const id = `${kind}\u0000${partition}`;
    const bucket = this.refill(id, kind, now);
    if (bucket) bucket.tokens -= units;
    else this.buckets.set(id, { tokens: this.rates[kind] - units, at: now });
  }

  /** Forgets partitions whose bucket is full again (they behave as never used). */
  sweep(now: number): void {
    for (const [id, bucket] of this.buckets) {
      const kind: Capacity = id.startsWith('read') ? 'read' : 'write';
      const rate = this.rates[kind];
      if (bucket.tokens + ((now - bucket.at) / 1000) * rate >= rate) this.buckets.delete(id);
    }
  }

  get size(): number {
    return this.buckets.size;
  }
}

type Names = Record<string, string> | undefined;
type Values = Record<string, AttributeValue> | undefined;

const resolve = (name: string, names: Names): string =>
  name.startsWith('#') ? (names?.[name] ?? name) : name;

/**
 * The partition key value a Query names: `KeyConditionExpression` (`#pk = :v` or `pk = :v`, either
 * way round) or the legacy `KeyConditions`.
 */
export function queryPartitionValue(
  input: {
    KeyConditionExpression?: string;
    KeyConditions?: Record<string, { AttributeValueList?: AttributeValue[] }>;
    ExpressionAttributeNames?: Names;
    ExpressionAttributeValues?: Values;
  },
  hashAttribute: string,
): string | undefined {
  if (input.KeyConditions) return valueString(input.KeyConditions[hashAttribute]?.AttributeValueList?.[0]);
  const expression = input.KeyConditionExpression;
  if (!expression) return undefined;
  const equality = /([#:]?[\w.-]+)\s*=\s*([#:]?[\w.-]+)/g;
  for (const match of expression.matchAll(equality)) {
    const [left = '', right = ''] = [match[1], match[2]];
    const [name, placeholder] = left.startsWith(':') ? [right, left] : [left, right];
    if (!placeholder.startsWith(':') || name.startsWith(':')) continue;
    if (resolve(name, input.ExpressionAttributeNames) === hashAttribute)
      return valueString(input.ExpressionAttributeValues?.[placeholder]);
  }
  return undefined;
}

/**
 * What an UpdateExpression's SET clause assigns from a plain value placeholder (`SET #a = :v, b = :w`):
 * attribute name → value. Assignments of functions or arithmetic are left out (their value is unknown here).
 */
export function updateAssignments(
  expression: string | undefined,
  names: Names,
  values: Values,
): Map<string, AttributeValue> {
  const assigned = new Map<string, AttributeValue>();
  if (!expression) return assigned;
  const clauses = expression.split(/\b(SET|REMOVE|ADD|DELETE)\b/i);
  for (let i = 1; i < clauses.length; i += 2) {
    if (clauses[i]?.toUpperCase() !== 'SET') continue;
    for (const assignment of splitTopLevel(clauses[i + 1] ?? '')) {
      const match = /^\s*([#\w.-]+)\s*=\s*(:\w+)\s*$/.exec(assignment);
      if (!match?.[1] || !match[2]) continue;
      const value = values?.[match[2]];
      if (value) assigned.set(resolve(match[1], names), value);
    }
  }
  return assigned;
}

function splitTopLevel(clause: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < clause.length; i++) {
    const c = clause[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(clause.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(clause.slice(start));
  return parts;
}
