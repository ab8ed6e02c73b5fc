/**
 * Tables' key schemas (learnt once per table with DescribeTable) and the identities the layer
 * keys its state by: an item (table + primary key) and a partition (table or index + partition key value).
 */

/** An attribute value in DynamoDB's JSON (`{ "S": "…" }`). */
export type AttributeValue = Record<string, unknown>;
export type Item = Record<string, AttributeValue>;

export interface KeySchema {
  hash: string;
  range?: string | undefined;
}

export interface TableSchema extends KeySchema {
  name: string;
  arn: string;
  /** Global secondary indexes by name. */
  indexes: Map<string, KeySchema>;
}

/** A key attribute's value as a string (`S:abc`, `N:12`, `B:…`); undefined when missing or not a key type. */
export function valueString(value: AttributeValue | undefined): string | undefined {
  if (!value) return undefined;
  if (typeof value.S === 'string') return `S:${value.S}`;
  if (typeof value.N === 'string') return `N:${value.N}`;
  if (typeof value.B === 'string') return `B:${value.B}`;
  return undefined;
}

/** An item's identity: its table and primary key, from an item or a key object. */
export function itemKey(schema: TableSchema, attributes: Item | undefined): string | undefined {
  if (!attributes) return undefined;
  const hash = valueString(attributes[schema.hash]);
  if (hash === undefined) return undefined;
  if (!schema.range) return `${schema.name}\u0000${hash}`;
  const range = valueString(attributes[schema.range]);
  return range === undefined ? undefined : `${schema.name}\u0000${hash}\u0000${range}`;
}

/** A partition's identity: table, index ('' for the table) and partition key value. */
export function partitionKey(table: string, index: string | undefined, value: string): string {
  return `${table}\u0000${index ?? ''}\u0000${value}`;
}

/** DynamoDB's item size, near enough: names plus values (numbers ~ half their digits), in bytes. */
export function itemSize(item: Item): number {
  let size = 0;
  for (const [name, value] of Object.entries(item)) size += Buffer.byteLength(name) + valueSize(value);
  return size;
}

function valueSize(value: AttributeValue): number {
  if (typeof value.S === 'string') return Buffer.byteLength(value.S);
  if (typeof value.N === 'string') return Math.ceil(value.N.replace(/[-.]/g, '').length / 2) + 1;
  if (typeof value.B === 'string') return Math.floor((value.B.length * 3) / 4);
  if (Array.isArray(value.SS))
    return value.SS.reduce((sum: number, s: string) => sum + Buffer.byteLength(s), 0);
  if (Array.isArray(value.NS)) return value.NS.length * 4;
  if (Array.isArray(value.BS))
    return value.BS.reduce((sum: number, b: string) => sum + (b.length * 3) / 4, 0);
  if (Array.isArray(value.L))
    return 3 + (value.L as AttributeValue[]).reduce((sum, each) => sum + 1 + valueSize(each), 0);
  if (value.M && typeof value.M === 'object')
    return 3 + itemSize(value.M as Item) + Object.keys(value.M).length;
  return 1;
}

/** Learns each table's key schema once (DescribeTable), on first use; forgets it when the table changes. */
export class SchemaCache {
  private readonly known = new Map<string, TableSchema>();
  private readonly pending = new Map<string, Promise<TableSchema | undefined>>();

  constructor(private readonly describe: (table: string) => Promise<unknown>) {}

  peek(table: string): TableSchema | undefined {
    return this.known.get(table);
  }

  /** The table's schema; undefined when it does not exist (asked again next time). */
  get(table: string): Promise<TableSchema | undefined> | TableSchema | undefined {
    const known = this.known.get(table);
    if (known) return known;
    let pending = this.pending.get(table);
    if (!pending) {
      pending = this.describe(table)
        .then((answer) => {
          const schema = parseDescription(answer);
          if (schema) this.known.set(table, schema);
          return schema;
        })
        .catch(() => undefined)
        .finally(() => this.pending.delete(table));
      this.pending.set(table, pending);
    }
    return pending;
  }

  forget(table: string): void {
    this.known.delete(table);
  }
}

interface KeyElement {
  AttributeName?: string;
  KeyType?: string;
}

function keySchemaOf(elements: KeyElement[] | undefined): KeySchema | undefined {
  const hash = elements?.find((each) => each.KeyType === 'HASH')?.AttributeName;
  if (!hash) return undefined;
  return { hash, range: elements?.find((each) => each.KeyType === 'RANGE')?.AttributeName };
}

function parseDescription(answer: unknown): TableSchema | undefined {
  const table = (answer as { Table?: Record<string, unknown> } | undefined)?.Table;
  if (!table) return undefined;
  const key = keySchemaOf(table.KeySchema as KeyElement[] | undefined);
  if (!key || typeof table.TableName !== 'string') return undefined;
  const indexes = new Map<string, KeySchema>();
  for (const index of (table.GlobalSecondaryIndexes ?? []) as {
    IndexName?: string;
    KeySchema?: KeyElement[];
  }[]) {
    const schema = keySchemaOf(index.KeySchema);
    if (index.IndexName && schema) indexes.set(index.IndexName, schema);
  }
  return {
    name: table.TableName,
    arn:
      typeof table.TableArn === 'string'
        ? table.TableArn
        : `arn:aws:dynamodb:ddblocal:000000000000:table/${table.TableName}`,
    ...key,
    indexes,
  };
}
