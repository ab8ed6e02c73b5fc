/**
 * The ledger (opt-in, `DYNAMODB_LEDGER`): what the layer charged, partition key value by partition
 * key value, so that a load run can say which partition of the table or of an index would bind a
 * tenant in AWS and at what rate. It records the units the throughput part charges (the same
 * figures the layer throttles by: DynamoDB Local's report for single writes and reads, 2 units a KB
 * for a transaction's actions), the operations forwarded, the items each committed transaction
 * named, and each refusal for throughput.
 *
 * `full` mode also bills index entries as AWS does, which the throughput part cannot: it only sees
 * the index keys a request names, so an entry an Update moves to another partition (a conversation
 * closed: out of `…#STATUS#open`, into `…#STATUS#closed`) or re-sorts, or one a Delete removes, is
 * charged to the new partition or not at all. Here each written item is read before and after its
 * write (two GetItems to DynamoDB Local, outside the throttling and the counts), and each index is
 * billed from its entries: a put on the new partition, a delete on the old one (both when the entry's
 * key changed), an update in place when only a projected attribute changed, nothing otherwise. As in
 * AWS, an index entry costs the same inside a transaction as outside one: the transactional ×2 is the
 * table's alone (measured against DynamoDB by dynoxide's tests/transactional_index_consumed_capacity.rs;
 * see docs/decisions.md). A transaction's table units are raised to the larger of the item's sizes
 * before and after (the layer counts 2 for an Update or a Delete, whatever the size), and a
 * ConditionCheck is billed as AWS does, 2 a KB of the item it reads. The reads cost the machine a
 * round trip each: `charges` skips them.
 *
 * Off, nothing of this runs: the layer holds no ledger and the hooks are optional calls on undefined.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LedgerMode } from './config';
import { type Item, itemSize, partitionKey, valueString } from './keys';
import type { Capacity, PartitionThroughput } from './throughput';

/** Where the ledger answers on the layer's own endpoint: `GET` a snapshot, `POST …/reset` one and start over. */
export const LEDGER_PATH = '/__ledger';

/** AWS's per-entry overhead of an index item (Developer Guide, "Item sizes and formats"). */
const INDEX_ENTRY_OVERHEAD = 100;

export interface LedgerPartition {
  table: string;
  /** The global secondary index, or null for the table itself. */
  index: string | null;
  /** The partition key value: a string as it is, another type as `N:…`/`B:…`. */
  key: string;
  writeUnits: number;
  readUnits: number;
  /** Writes and reads charged to it (a request, a batch's item, a transaction's action, an index entry). */
  writes: number;
  reads: number;
  /** Requests, batch items and transaction actions refused for its throughput. */
  throttles: number;
}

export interface LedgerItem {
  table: string;
  pk: string;
  sk: string | null;
  /** Committed TransactWriteItems naming it (its condition checks included). */
  transactions: number;
  /** TransactWriteItems and TransactGetItems cancelled because it was held. */
  conflicts: number;
}

export interface LedgerSnapshot {
  mode: Exclude<LedgerMode, 'off'>;
  /** Epoch ms of the last reset (or the start) and of this snapshot. */
  sinceMs: number;
  atMs: number;
  /** Epoch ms of the last write the layer forwarded (0: none since the reset). */
  lastWriteMs: number;
  /** Requests received, by operation (`GetItem`, `TransactWriteItems`…; '' for non-DynamoDB calls). */
  requests: Record<string, number>;
  /** Refusals for throughput (the sum over partitions). */
  throttles: number;
  partitions: LedgerPartition[];
  items: LedgerItem[];
}

/** An index as the ledger bills it: its key and what its entries hold. */
interface IndexShape {
  name: string;
  hash: string;
  range?: string | undefined;
  /** `ALL`, or the non-key attributes an entry holds besides the keys. */
  projection: 'ALL' | string[];
}

interface TableShape {
  name: string;
  hash: string;
  range?: string | undefined;
  indexes: IndexShape[];
}

/** An item being written, with its version before the write (read by `image`). */
export interface WriteImage {
  table: TableShape;
  key: Item;
  before: Item | undefined;
}

interface PartitionTally {
  writeUnits: number;
  readUnits: number;
  writes: number;
  reads: number;
  throttles: number;
}

interface ItemTally {
  transactions: number;
  conflicts: number;
}

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

/** The same value, whatever the order of a map's names (sets are compared as sent). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((name) => `${JSON.stringify(name)}:${canonical((value as Record<string, unknown>)[name])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/** A key value as shown: a string as it is, another type with its tag (`N:12`). */
const keyText = (value: string): string => (value.startsWith('S:') ? value.slice(2) : value);

/** Partition ids are `partitionKey(table, index, value)`: the index part is empty for the table. */
const isIndexPartition = (partition: string): boolean => partition.split('\u0000')[1] !== '';

function parseTable(answer: unknown): TableShape | undefined {
  const table = (answer as { Table?: Record<string, unknown> } | undefined)?.Table;
  type Element = { AttributeName?: string; KeyType?: string };
  const keyOf = (elements: Element[] | undefined) => ({
    hash: elements?.find((each) => each.KeyType === 'HASH')?.AttributeName,
    range: elements?.find((each) => each.KeyType === 'RANGE')?.AttributeName,
  });
  if (!table || typeof table.TableName !== 'string') return undefined;
  const own = keyOf(table.KeySchema as Element[] | undefined);
  if (!own.hash) return undefined;
  const indexes: IndexShape[] = [];
  for (const index of (table.GlobalSecondaryIndexes ?? []) as {
    IndexName?: string;
    KeySchema?: Element[];
    Projection?: { ProjectionType?: string; NonKeyAttributes?: string[] };
  }[]) {
    const key = keyOf(index.KeySchema);
    if (!index.IndexName || !key.hash) continue;
    indexes.push({
      name: index.IndexName,
      hash: key.hash,
      range: key.range,
      projection:
        index.Projection?.ProjectionType === 'ALL' ? 'ALL' : [...(index.Projection?.NonKeyAttributes ?? [])],
    });
  }
  return { name: table.TableName, hash: own.hash, range: own.range, indexes };
}

export class Ledger {
  private currentMode: Exclude<LedgerMode, 'off'>;
  private partitions = new Map<string, PartitionTally>();
  private items = new Map<string, ItemTally>();
  private requests = new Map<string, number>();
  private sinceMs = Date.now();
  private lastWriteMs = 0;
  private readonly tables = new Map<string, Promise<TableShape | undefined>>();

  constructor(
    mode: Exclude<LedgerMode, 'off'>,
    /** DescribeTable and a strongly consistent GetItem, sent to DynamoDB Local past the layer. */
    private readonly upstream: {
      describe: (table: string) => Promise<unknown>;
      get: (table: string, key: Item) => Promise<Item | undefined>;
    },
  ) {
    this.currentMode = mode;
  }

  get mode(): Exclude<LedgerMode, 'off'> {
    return this.currentMode;
  }

  /** `charges` for load runs (no extra reads), `full` for figures (index entries billed as AWS does). */
  setMode(mode: Exclude<LedgerMode, 'off'>): void {
    this.currentMode = mode;
  }

  /** Whether writes are read before and after (`image`, `bill`). */
  get images(): boolean {
    return this.currentMode === 'full';
  }

  /** Records every charge of `throughput` from now on; the layer's limits are unchanged. */
  watch(throughput: PartitionThroughput): void {
    const charge = throughput.charge.bind(throughput);
    throughput.charge = (partition: string, kind: Capacity, units: number, now: number) => {
      charge(partition, kind, units, now);
      // In full mode index entries are billed from the items' images instead.
      if (kind === 'write' && this.images && isIndexPartition(partition)) return;
      this.add(partition, kind, units);
    };
  }

  request(operation: string): void {
    this.requests.set(operation, (this.requests.get(operation) ?? 0) + 1);
    if (WRITES.has(operation)) this.lastWriteMs = Date.now();
  }

  throttled(partition: string): void {
    this.tally(partition).throttles += 1;
  }

  /** A committed transaction: the item keys it named (`keys.ts` itemKey). */
  transaction(items: readonly string[]): void {
    for (const item of new Set(items)) this.itemTally(item).transactions += 1;
  }

  /** A transaction cancelled for these held items. */
  conflict(items: readonly string[]): void {
    for (const item of new Set(items)) this.itemTally(item).conflicts += 1;
  }

  /**
   * The item's version before its write (full mode), from the write's item or key; undefined when
   * its table cannot be described.
   */
  async image(tableName: string, attributes: Item | undefined): Promise<WriteImage | undefined> {
    const table = await this.shapeOf(tableName);
    if (!table || !attributes) return undefined;
    const key: Item = {};
    for (const name of [table.hash, table.range]) {
      const value = name === undefined ? undefined : attributes[name];
      if (name !== undefined && value) key[name] = value;
    }
    return { table, key, before: await this.upstream.get(tableName, key).catch(() => undefined) };
  }

  /**
   * Bills a committed write's index entries from its images (the version after is read now), and
   * for a transaction's action the table units above those the layer charged (`chargedTableUnits`).
   */
  async bill(image: WriteImage, transactional: boolean, chargedTableUnits = 0): Promise<void> {
    const after = await this.upstream.get(image.table.name, image.key).catch(() => undefined);
    const { table, before } = image;
    if (transactional) {
      const larger = Math.max(before ? itemSize(before) : 0, after ? itemSize(after) : 0);
      const billed = 2 * Math.max(1, Math.ceil(larger / 1024));
      const hash = valueString(image.key[table.hash]);
      // Units on top of a charge already counted: not another write.
      if (hash !== undefined && billed > chargedTableUnits)
        this.add(partitionKey(table.name, undefined, hash), 'write', billed - chargedTableUnits, false);
    }
    for (const index of table.indexes) {
      const old = before && this.entry(table, index, before);
      const fresh = after && this.entry(table, index, after);
      if (!old && !fresh) continue;
      const partition = (entry: Item) =>
        partitionKey(table.name, index.name, valueString(entry[index.hash]) ?? '');
      const units = (entry: Item) => Math.max(1, Math.ceil((itemSize(entry) + INDEX_ENTRY_OVERHEAD) / 1024));
      if (old && fresh) {
        const moved =
          canonical(old[index.hash]) !== canonical(fresh[index.hash]) ||
          (index.range !== undefined && canonical(old[index.range]) !== canonical(fresh[index.range]));
        if (moved) {
          // AWS: a delete of the old entry and a put of the new one.
          this.add(partition(old), 'write', units(old));
          this.add(partition(fresh), 'write', units(fresh));
        } else if (canonical(old) !== canonical(fresh)) this.add(partition(fresh), 'write', units(fresh));
      } else if (fresh) this.add(partition(fresh), 'write', units(fresh));
      else if (old) this.add(partition(old), 'write', units(old));
    }
  }

  snapshot(): LedgerSnapshot {
    let throttles = 0;
    const partitions: LedgerPartition[] = [];
    for (const [id, tally] of this.partitions) {
      const [table = '', index = '', value = ''] = id.split('\u0000');
      throttles += tally.throttles;
      partitions.push({ table, index: index || null, key: keyText(value), ...tally });
    }
    const items: LedgerItem[] = [];
    for (const [id, tally] of this.items) {
      const [table = '', pk = '', sk] = id.split('\u0000');
      items.push({ table, pk: keyText(pk), sk: sk === undefined ? null : keyText(sk), ...tally });
    }
    return {
      mode: this.currentMode,
      sinceMs: this.sinceMs,
      atMs: Date.now(),
      lastWriteMs: this.lastWriteMs,
      requests: Object.fromEntries(this.requests),
      throttles,
      partitions,
      items,
    };
  }

  reset(): void {
    this.partitions = new Map();
    this.items = new Map();
    this.requests = new Map();
    this.sinceMs = Date.now();
    this.lastWriteMs = 0;
  }

  /** The admin path on the layer's endpoint; false for any other request (a DynamoDB call). */
  serve(req: IncomingMessage, res: ServerResponse): boolean {
    const path = (req.url ?? '').split('?')[0];
    if (path !== LEDGER_PATH && path !== `${LEDGER_PATH}/reset`) return false;
    req.resume();
    const answer = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
    };
    if (path === LEDGER_PATH && req.method === 'GET') answer(200, this.snapshot());
    else if (path === `${LEDGER_PATH}/reset` && req.method === 'POST') {
      const taken = this.snapshot();
      this.reset();
      answer(200, taken);
    } else answer(405, { message: `GET ${LEDGER_PATH} or POST ${LEDGER_PATH}/reset` });
    return true;
  }

  private add(partition: string, kind: Capacity, units: number, counted = true): void {
    if (!(units > 0)) return;
    const tally = this.tally(partition);
    if (kind === 'write') {
      tally.writeUnits += units;
      if (counted) tally.writes += 1;
    } else {
      tally.readUnits += units;
      if (counted) tally.reads += 1;
    }
  }

  private tally(partition: string): PartitionTally {
    let tally = this.partitions.get(partition);
    if (!tally) {
      tally = { writeUnits: 0, readUnits: 0, writes: 0, reads: 0, throttles: 0 };
      this.partitions.set(partition, tally);
    }
    return tally;
  }

  private itemTally(item: string): ItemTally {
    let tally = this.items.get(item);
    if (!tally) {
      tally = { transactions: 0, conflicts: 0 };
      this.items.set(item, tally);
    }
    return tally;
  }

  /** The item's entry in the index (keys and projected attributes); undefined when it has none. */
  private entry(table: TableShape, index: IndexShape, item: Item): Item | undefined {
    if (!item[index.hash] || (index.range && !item[index.range])) return undefined;
    if (index.projection === 'ALL') return item;
    const entry: Item = {};
    for (const name of [table.hash, table.range, index.hash, index.range, ...index.projection]) {
      const value = name === undefined ? undefined : item[name];
      if (name !== undefined && value) entry[name] = value;
    }
    return entry;
  }

  /** A table changed (created, deleted, its indexes): described again at its next write. */
  forget(table: string): void {
    this.tables.delete(table);
  }

  private shapeOf(table: string): Promise<TableShape | undefined> {
    let shape = this.tables.get(table);
    if (!shape) {
      shape = this.upstream
        .describe(table)
        .then(parseTable)
        .catch(() => undefined);
      this.tables.set(table, shape);
      // A table that could not be described is asked again next time.
      void shape.then((found) => {
        if (!found) this.tables.delete(table);
      });
    }
    return shape;
  }
}
