/**
 * An HTTP proxy in front of DynamoDB Local that answers as AWS's DynamoDB would where DynamoDB Local
 * does not: transaction conflicts, index propagation lag, partition throughput limits and, opt-in,
 * stale eventually consistent reads (docs/local.md, "DynamoDB as AWS runs it"). Every request
 * (awsJson1_0, `X-Amz-Target: DynamoDB_20120810.<Op>`) goes to DynamoDB Local over keep-alive
 * connections; what no part concerns (DynamoDB Streams, table management, PartiQL) passes untouched,
 * and bodies are rewritten only when something changes.
 */
import { randomUUID } from 'node:crypto';
import {
  Agent,
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  askIndexes,
  type CapacityReport,
  indexUnits,
  reportsOf,
  settleBytes,
  settleParsed,
  tableUnits,
} from './capacity';
import {
  DEFAULT_SEMANTICS,
  PARTITION_READ_UNITS_PER_SECOND,
  PARTITION_WRITE_UNITS_PER_SECOND,
  type SemanticsConfig,
} from './config';
import { ConflictTracker } from './conflicts';
import {
  type CancellationReason,
  conflictReason,
  type ErrorAnswer,
  throttleReason,
  throughputExceeded,
  transactionCanceled,
  transactionConflict,
  transactionInProgress,
} from './errors';
import { dropRecent, RecentWrites, removeAdded, withKeyAttributes } from './index-lag';
import {
  type AttributeValue,
  type Item,
  itemKey,
  itemSize,
  partitionKey,
  SchemaCache,
  type TableSchema,
  valueString,
} from './keys';
import { LEDGER_PATH, Ledger, type WriteImage } from './ledger';
import { PartitionThroughput, queryPartitionValue, updateAssignments } from './throughput';

/** Further reads of a Query page cut short by items an index does not show yet. */
const MAX_REFILLS = 10;

export interface SemanticsStats {
  /** Requests the layer received. */
  requests: number;
  /** TransactWriteItems and TransactGetItems cancelled for a conflict (TransactionConflict). */
  transactionConflicts: number;
  /** Single writes refused (TransactionConflictException) and BatchWriteItem items left unprocessed, for a transaction in flight. */
  writeConflicts: number;
  /** Requests refused for partition throughput (ProvisionedThroughputExceededException, ThrottlingError), and batch items left unprocessed for it. */
  throttles: number;
  /** Items an index Query/Scan did not return because they were written less than the lag ago. */
  hiddenByIndexLag: number;
  /** Items an eventually consistent read did not return (stale reads on). */
  hiddenByStaleReads: number;
  /** Items held right now by transactions and writes in flight (a gauge, not a count). */
  heldItems: number;
}

export interface DynamoDbSemantics {
  endpoint: string;
  config: SemanticsConfig;
  stats(): SemanticsStats;
  /** What was charged to each partition (`config.ledger`); undefined when off. Also at `GET /__ledger`. */
  ledger: Ledger | undefined;
  close(): Promise<void>;
}

export interface SemanticsOptions {
  /** DynamoDB Local's endpoint (`http://127.0.0.1:<port>`). */
  upstream: string;
  config?: Partial<SemanticsConfig>;
}

interface Input {
  TableName?: string;
  IndexName?: string;
  Key?: Item;
  Item?: Item;
  ConsistentRead?: boolean;
  Select?: string;
  ReturnConsumedCapacity?: string;
  UpdateExpression?: string;
  ProjectionExpression?: string;
  KeyConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, AttributeValue>;
  ClientRequestToken?: string;
  [other: string]: unknown;
}

interface WriteRequest {
  PutRequest?: { Item?: Item };
  DeleteRequest?: { Key?: Item };
}

interface KeysAndAttributes {
  Keys?: Item[];
  ConsistentRead?: boolean;
  [other: string]: unknown;
}

interface Upstream {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

interface Call {
  req: IncomingMessage;
  res: ServerResponse;
  body: Buffer;
  input: Input;
  operation: string;
}

/** A partition a request touches: its bucket, and the index it belongs to (undefined: the table). */
interface Touched {
  id: string;
  index?: string | undefined;
}

const DYNAMODB_TARGET = 'DynamoDB_20120810.';
const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host'];
/** How often partitions whose bucket is full again are forgotten. */
const SWEEP_MS = 5_000;
const FALLBACK_AUTHORIZATION =
  'AWS4-HMAC-SHA256 Credential=local/20240101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0';

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', reject);
    req.on('end', () => resolve(chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks)));
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

/** Starts the layer on a free loopback port, in front of `upstream`. */
export async function startDynamoDbSemantics(options: SemanticsOptions): Promise<DynamoDbSemantics> {
  const config: SemanticsConfig = { ...DEFAULT_SEMANTICS, ...options.config };
  const upstream = new URL(options.upstream);
  const agent = new Agent({ keepAlive: true, scheduling: 'lifo' });
  const conflicts = config.conflicts ? new ConflictTracker() : undefined;
  const recent = new RecentWrites(Math.max(config.indexLagMs, config.staleReadsMs));
  // The ledger records what the throughput part charges: with the limits off it still charges,
  // against buckets no request can empty.
  const throughput = config.partitionLimits
    ? new PartitionThroughput(
        PARTITION_READ_UNITS_PER_SECOND / config.partitionDivisor,
        PARTITION_WRITE_UNITS_PER_SECOND / config.partitionDivisor,
      )
    : config.ledger !== 'off'
      ? new PartitionThroughput(Number.MAX_VALUE, Number.MAX_VALUE)
      : undefined;
  const counters: Omit<SemanticsStats, 'heldItems'> = {
    requests: 0,
    transactionConflicts: 0,
    writeConflicts: 0,
    throttles: 0,
    hiddenByIndexLag: 0,
    hiddenByStaleReads: 0,
  };
  const anyPart = Boolean(conflicts || throughput || recent.enabled);
  let authorization = FALLBACK_AUTHORIZATION;

  // --- forwarding ---------------------------------------------------------------------------------

  const send = (
    method: string,
    path: string,
    headers: Record<string, string | string[] | undefined>,
    body: Buffer,
    retry: boolean,
  ): Promise<Upstream> =>
    new Promise((resolve, reject) => {
      const outgoing = request(
        { host: upstream.hostname, port: upstream.port, method, path, headers, agent },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', reject);
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 500,
              headers: response.headers,
              body: chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks),
            }),
          );
        },
      );
      outgoing.on('error', (error: NodeJS.ErrnoException) => {
        // A kept-alive connection DynamoDB Local closed meanwhile: once more on a fresh one.
        if (retry && outgoing.reusedSocket && error.code === 'ECONNRESET')
          send(method, path, headers, body, false).then(resolve, reject);
        else reject(error);
      });
      outgoing.end(body);
    });

  const forward = (req: IncomingMessage, body: Buffer): Promise<Upstream> => {
    const headers: Record<string, string | string[] | undefined> = { ...req.headers };
    for (const name of HOP_BY_HOP) delete headers[name];
    headers.host = upstream.host;
    headers['content-length'] = String(body.length);
    return send(req.method ?? 'POST', req.url ?? '/', headers, body, true);
  };

  const relay = (res: ServerResponse, answer: Upstream, body: Buffer = answer.body): void => {
    const headers: Record<string, string | string[] | undefined> = { ...answer.headers };
    for (const name of HOP_BY_HOP) delete headers[name];
    if (body !== answer.body) delete headers['x-amz-crc32'];
    headers['content-length'] = String(body.length);
    res.writeHead(answer.status, headers);
    res.end(body);
  };

  const fail = (res: ServerResponse, error: ErrorAnswer): void => {
    res.writeHead(error.status, {
      'content-type': 'application/x-amz-json-1.0',
      'content-length': String(Buffer.byteLength(error.body)),
      'x-amzn-requestid': randomUUID(),
    });
    res.end(error.body);
  };

  const passThrough = async (call: Call): Promise<void> =>
    relay(call.res, await forward(call.req, call.body));

  /** A call of the layer's own, straight to DynamoDB Local: neither held, charged nor counted. */
  const ownCall = (operation: string, input: unknown): Promise<Upstream> =>
    send(
      'POST',
      '/',
      {
        host: upstream.host,
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `${DYNAMODB_TARGET}${operation}`,
        authorization,
      },
      json(input),
      true,
    );

  const describeTable = async (table: string): Promise<unknown> => {
    const answer = await ownCall('DescribeTable', { TableName: table });
    return answer.status === 200 ? JSON.parse(answer.body.toString('utf8')) : undefined;
  };

  const schemas = new SchemaCache(describeTable);

  const ledger =
    config.ledger === 'off'
      ? undefined
      : new Ledger(config.ledger, {
          describe: describeTable,
          get: async (table, key) => {
            const answer = await ownCall('GetItem', { TableName: table, Key: key, ConsistentRead: true });
            if (answer.status !== 200) throw new Error(`GetItem: ${answer.status}`);
            return (JSON.parse(answer.body.toString('utf8')) as { Item?: Item }).Item;
          },
        });
  if (ledger && throughput) ledger.watch(throughput);

  /** Every table's schema, or undefined when one is unknown (the request then goes as it is). */
  const schemasOf = async (
    tables: Iterable<string | undefined>,
  ): Promise<Map<string, TableSchema> | undefined> => {
    const found = new Map<string, TableSchema>();
    for (const table of tables) {
      if (!table) return undefined;
      if (found.has(table)) continue;
      const schema = await schemas.get(table);
      if (!schema) return undefined;
      found.set(table, schema);
    }
    return found;
  };

  // --- partitions ---------------------------------------------------------------------------------

  /** The partitions a write of this item lands in: the table's, and each index whose key the write sets. */
  const writePartitions = (schema: TableSchema, kind: string, action: Input): Touched[] => {
    const attributes = kind === 'Put' ? action.Item : action.Key;
    const hash = valueString(attributes?.[schema.hash]);
    if (hash === undefined) return [];
    const touched: Touched[] = [{ id: partitionKey(schema.name, undefined, hash) }];
    if (kind === 'Put' && action.Item) {
      for (const [index, key] of schema.indexes) {
        const value = valueString(action.Item[key.hash]);
        if (value !== undefined && (!key.range || action.Item[key.range]))
          touched.push({ id: partitionKey(schema.name, index, value), index });
      }
    } else if (kind === 'Update' && action.UpdateExpression) {
      const assigned = updateAssignments(
        action.UpdateExpression,
        action.ExpressionAttributeNames,
        action.ExpressionAttributeValues,
      );
      for (const [index, key] of schema.indexes) {
        const value = valueString(assigned.get(key.hash));
        if (value !== undefined) touched.push({ id: partitionKey(schema.name, index, value), index });
      }
    }
    return touched;
  };

  /** The first partition without `minimum` units left, if any. */
  const refusing = (touched: readonly Touched[], kind: 'read' | 'write', minimum: number, now: number) =>
    throughput ? touched.find((each) => !throughput.admits(each.id, kind, minimum, now)) : undefined;

  const throttled = (call: Call, schema: TableSchema, refused: Touched, kind: 'read' | 'write'): void => {
    counters.throttles += 1;
    ledger?.throttled(refused.id);
    const resource = refused.index ? `${schema.arn}/index/${refused.index}` : schema.arn;
    fail(call.res, throughputExceeded(resource, Boolean(refused.index), kind));
  };

  /** Charges a single-item write's units: the table's to its partition, each index's to the one the write named. */
  const chargeWrite = (
    touched: readonly Touched[],
    report: CapacityReport | undefined,
    now: number,
  ): void => {
    if (!throughput) return;
    for (const each of touched)
      throughput.charge(
        each.id,
        'write',
        each.index ? indexUnits(report, each.index) : tableUnits(report),
        now,
      );
  };

  /** The answer as the client asked for its capacity, and the INDEXES report the layer asked for. */
  const settle = (call: Call, answer: Upstream): { consumed: unknown; body: Buffer } => {
    const fast = settleBytes(answer.body, call.input.ReturnConsumedCapacity);
    if (fast) return fast;
    const parsed = JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>;
    if (parsed.ConsumedCapacity === undefined) return { consumed: undefined, body: answer.body };
    const consumed = settleParsed(parsed, call.input.ReturnConsumedCapacity);
    return { consumed, body: json(parsed) };
  };

  // --- operations ---------------------------------------------------------------------------------

  const getItem = async (call: Call): Promise<void> => {
    const { input } = call;
    const stale =
      config.staleReadsMs > 0 &&
      !input.ConsistentRead &&
      Boolean(input.TableName) &&
      recent.any(input.TableName as string, Date.now());
    if (!throughput && !stale) return passThrough(call);
    const schema = input.TableName ? await schemas.get(input.TableName) : undefined;
    const hash = schema && valueString(input.Key?.[schema.hash]);
    if (!schema || hash === undefined) return passThrough(call);
    const touched: Touched[] = [{ id: partitionKey(schema.name, undefined, hash) }];
    const refused = refusing(touched, 'read', input.ConsistentRead ? 1 : 0.5, Date.now());
    if (refused) return throttled(call, schema, refused, 'read');
    const answer = await forward(call.req, throughput ? askIndexes(call.body, input) : call.body);
    if (answer.status !== 200) return relay(call.res, answer);
    let body = answer.body;
    if (throughput) {
      const settled = settle(call, answer);
      body = settled.body;
      for (const each of touched)
        throughput.charge(each.id, 'read', tableUnits(reportsOf(settled.consumed)[0]), Date.now());
    }
    const key = itemKey(schema, input.Key);
    if (stale && key && recent.within(schema.name, key, config.staleReadsMs, Date.now())) {
      const parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      if (parsed.Item) {
        delete parsed.Item;
        counters.hiddenByStaleReads += 1;
        body = json(parsed);
      }
    }
    relay(call.res, answer, body);
  };

  const singleWrite = async (call: Call): Promise<void> => {
    const { input, operation } = call;
    const schema = input.TableName ? await schemas.get(input.TableName) : undefined;
    const kind = operation === 'PutItem' ? 'Put' : operation === 'UpdateItem' ? 'Update' : 'Delete';
    const key = schema && itemKey(schema, kind === 'Put' ? input.Item : input.Key);
    if (!schema || !key) return passThrough(call);
    // Before the checks: from them to the hold nothing awaits.
    const image = ledger?.images
      ? await ledger.image(schema.name, kind === 'Put' ? input.Item : input.Key)
      : undefined;
    if (conflicts?.heldByTransaction(key)) {
      counters.writeConflicts += 1;
      return fail(call.res, transactionConflict());
    }
    const touched = throughput ? writePartitions(schema, kind, input) : [];
    const refused = refusing(touched, 'write', 1, Date.now());
    if (refused) return throttled(call, schema, refused, 'write');
    const release = conflicts?.hold('write', [key], config.transactionMs);
    let answer: Upstream;
    try {
      answer = await forward(call.req, throughput ? askIndexes(call.body, input) : call.body);
    } finally {
      release?.();
    }
    if (answer.status !== 200) return relay(call.res, answer);
    const now = Date.now();
    recent.record(schema.name, key, now);
    if (image) await ledger?.bill(image, false);
    if (!throughput) return relay(call.res, answer);
    const settled = settle(call, answer);
    chargeWrite(touched, reportsOf(settled.consumed)[0], now);
    relay(call.res, answer, settled.body);
  };

  const queryOrScan = async (call: Call): Promise<void> => {
    const { input, operation } = call;
    const schema = input.TableName ? await schemas.get(input.TableName) : undefined;
    if (!schema) return passThrough(call);
    const index = input.IndexName;
    const now = Date.now();
    const lag = Boolean(index) && config.indexLagMs > 0 && recent.any(schema.name, now);
    const stale = !index && config.staleReadsMs > 0 && !input.ConsistentRead && recent.any(schema.name, now);
    const hides = lag || stale;
    let touched: Touched | undefined;
    if (throughput && operation === 'Query') {
      const key = index ? schema.indexes.get(index) : schema;
      const value = key && queryPartitionValue(input, key.hash);
      if (value !== undefined) touched = { id: partitionKey(schema.name, index, value), index };
    }
    if (!throughput && !hides) return passThrough(call);
    if (touched) {
      const refused = refusing([touched], 'read', input.ConsistentRead ? 1 : 0.5, now);
      if (refused) return throttled(call, schema, refused, 'read');
    }
    // A count must be made after the hidden items are left out: ask for their keys instead. Items
    // are told by their table key: a read naming its attributes is asked for those too.
    const countOnly = hides && input.Select === 'COUNT';
    let changed: Input | undefined;
    let added: string[] = [];
    if (countOnly) {
      const names = { ...input.ExpressionAttributeNames };
      const projection = [schema.hash, schema.range]
        .filter((name): name is string => Boolean(name))
        .map((name, i) => {
          names[`#semanticsKey${i}`] = name;
          return `#semanticsKey${i}`;
        });
      const { Select: _select, ...rest } = input;
      changed = { ...rest, ProjectionExpression: projection.join(', '), ExpressionAttributeNames: names };
    } else if (hides) {
      const projected = withKeyAttributes(input, schema);
      added = projected.added;
      if (added.length) changed = projected.read;
    }
    const outgoing = throughput ? askIndexes(call.body, input, changed) : changed ? json(changed) : call.body;
    const answer = await forward(call.req, outgoing);
    if (answer.status !== 200) return relay(call.res, answer);
    let consumed: unknown;
    let body = answer.body;
    if (hides) {
      const parsed = JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>;
      const items = (parsed.Items ?? []) as Item[];
      const window = lag ? config.indexLagMs : config.staleReadsMs;
      const { kept, dropped } = dropRecent(recent, schema, items, window, Date.now());
      if (lag) counters.hiddenByIndexLag += dropped;
      else counters.hiddenByStaleReads += dropped;
      removeAdded(kept, added);
      // AWS's Limit counts the items the index shows: a page cut short by hidden items reads on from
      // where DynamoDB Local stopped until it holds Limit items or the Query ends.
      let refills = 0;
      while (
        !countOnly &&
        dropped &&
        typeof input.Limit === 'number' &&
        kept.length < input.Limit &&
        parsed.LastEvaluatedKey &&
        refills++ < MAX_REFILLS
      ) {
        const more: Input = {
          ...(changed ?? input),
          Limit: input.Limit - kept.length,
          ExclusiveStartKey: parsed.LastEvaluatedKey,
        };
        delete more.ReturnConsumedCapacity;
        const next = await forward(call.req, json(more));
        if (next.status !== 200) break;
        const page = JSON.parse(next.body.toString('utf8')) as Record<string, unknown>;
        const found = dropRecent(recent, schema, (page.Items ?? []) as Item[], window, Date.now());
        if (lag) counters.hiddenByIndexLag += found.dropped;
        else counters.hiddenByStaleReads += found.dropped;
        removeAdded(found.kept, added);
        kept.push(...found.kept);
        parsed.ScannedCount = Number(parsed.ScannedCount ?? 0) + Number(page.ScannedCount ?? 0);
        if (page.LastEvaluatedKey) parsed.LastEvaluatedKey = page.LastEvaluatedKey;
        else delete parsed.LastEvaluatedKey;
      }
      if (countOnly) {
        delete parsed.Items;
        parsed.Count = kept.length;
      } else if (dropped) {
        parsed.Items = kept;
        parsed.Count = kept.length;
      }
      const capacityChanged =
        throughput && parsed.ConsumedCapacity !== undefined && input.ReturnConsumedCapacity !== 'INDEXES';
      if (throughput) consumed = settleParsed(parsed, input.ReturnConsumedCapacity);
      if (countOnly || dropped || added.length || capacityChanged) body = json(parsed);
    } else if (throughput) {
      const settled = settle(call, answer);
      consumed = settled.consumed;
      body = settled.body;
    }
    if (throughput && touched) {
      const report = reportsOf(consumed)[0];
      throughput.charge(
        touched.id,
        'read',
        index ? indexUnits(report, index) : tableUnits(report),
        Date.now(),
      );
    }
    relay(call.res, answer, body);
  };

  const batchGet = async (call: Call): Promise<void> => {
    const { input } = call;
    const requested = (input.RequestItems ?? {}) as Record<string, KeysAndAttributes>;
    const found = await schemasOf(Object.keys(requested));
    if (!found) return passThrough(call);
    const now = Date.now();
    const staleTables = new Set(
      Object.entries(requested)
        .filter(
          ([table, entry]) => config.staleReadsMs > 0 && !entry.ConsistentRead && recent.any(table, now),
        )
        .map(([table]) => table),
    );
    if (!throughput && staleTables.size === 0) return passThrough(call);
    const refused: Record<string, KeysAndAttributes> = {};
    const outgoing: Record<string, KeysAndAttributes> = {};
    /** Key attributes asked for on the client's behalf, by table (stale reads tell items by them). */
    const addedBy = new Map<string, string[]>();
    const charged = new Map<string, string[]>();
    let refusedCount = 0;
    let firstRefused: { schema: TableSchema; touched: Touched } | undefined;
    const refusedPartitions: string[] = [];
    for (const [table, entry] of Object.entries(requested)) {
      const schema = found.get(table) as TableSchema;
      const keep: Item[] = [];
      const partitions: string[] = [];
      const left: Item[] = [];
      for (const key of entry.Keys ?? []) {
        const hash = valueString(key[schema.hash]);
        const touched = hash === undefined ? undefined : { id: partitionKey(table, undefined, hash) };
        if (touched && refusing([touched], 'read', entry.ConsistentRead ? 1 : 0.5, now)) {
          left.push(key);
          firstRefused ??= { schema, touched };
          refusedPartitions.push(touched.id);
          continue;
        }
        keep.push(key);
        if (touched) partitions.push(touched.id);
      }
      charged.set(table, partitions);
      if (keep.length) {
        const projected = staleTables.has(table)
          ? withKeyAttributes(entry, schema)
          : { read: entry, added: [] as string[] };
        outgoing[table] = { ...projected.read, Keys: keep };
        if (projected.added.length) addedBy.set(table, projected.added);
      }
      if (left.length) {
        refused[table] = { ...entry, Keys: left };
        refusedCount += left.length;
      }
    }
    if (firstRefused && Object.keys(outgoing).length === 0) {
      return throttled(call, firstRefused.schema, firstRefused.touched, 'read');
    }
    counters.throttles += refusedCount;
    for (const id of refusedPartitions) ledger?.throttled(id);
    const changed = refusedCount || addedBy.size ? { ...input, RequestItems: outgoing } : undefined;
    const body = throughput ? askIndexes(call.body, input, changed) : changed ? json(changed) : call.body;
    const answer = await forward(call.req, body);
    if (answer.status !== 200) return relay(call.res, answer);
    let consumed: unknown;
    let out = answer.body;
    if (refusedCount || staleTables.size) {
      const parsed = JSON.parse(answer.body.toString('utf8')) as {
        Responses?: Record<string, Item[]>;
        UnprocessedKeys?: Record<string, KeysAndAttributes>;
        [other: string]: unknown;
      };
      for (const table of staleTables) {
        const items = parsed.Responses?.[table];
        if (!items || !parsed.Responses) continue;
        const { kept, dropped } = dropRecent(
          recent,
          found.get(table) as TableSchema,
          items,
          config.staleReadsMs,
          Date.now(),
        );
        removeAdded(kept, addedBy.get(table) ?? []);
        parsed.Responses[table] = kept;
        counters.hiddenByStaleReads += dropped;
      }
      const unprocessed = { ...parsed.UnprocessedKeys };
      for (const [table, entry] of Object.entries(refused)) {
        const already = unprocessed[table];
        unprocessed[table] = { ...entry, Keys: [...(already?.Keys ?? []), ...(entry.Keys ?? [])] };
      }
      parsed.UnprocessedKeys = unprocessed;
      if (throughput) consumed = settleParsed(parsed, input.ReturnConsumedCapacity);
      out = json(parsed);
    } else if (throughput) {
      const settled = settle(call, answer);
      consumed = settled.consumed;
      out = settled.body;
    }
    if (throughput)
      for (const report of reportsOf(consumed)) {
        const partitions = report.TableName ? charged.get(report.TableName) : undefined;
        if (!partitions?.length) continue;
        const share = tableUnits(report) / partitions.length;
        for (const id of partitions) throughput.charge(id, 'read', share, Date.now());
      }
    relay(call.res, answer, out);
  };

  const batchWrite = async (call: Call): Promise<void> => {
    const { input } = call;
    const requested = (input.RequestItems ?? {}) as Record<string, WriteRequest[]>;
    const found = await schemasOf(Object.keys(requested));
    if (!found) return passThrough(call);
    const now = Date.now();
    const outgoing: Record<string, WriteRequest[]> = {};
    const unprocessed: Record<string, WriteRequest[]> = {};
    const written: {
      table: string;
      key: string;
      touched: Touched[];
      weight: number;
      image: WriteImage | undefined;
    }[] = [];
    let left = 0;
    let throttledItems = 0;
    let firstRefused: { schema: TableSchema; touched: Touched } | undefined;
    const refusedPartitions: string[] = [];
    // Before the checks: from them to the holds nothing awaits.
    const images = ledger?.images ? new Map<WriteRequest, WriteImage | undefined>() : undefined;
    if (images && ledger)
      await Promise.all(
        Object.entries(requested).flatMap(([table, writes]) =>
          writes.map(async (write) =>
            images.set(write, await ledger.image(table, write.PutRequest?.Item ?? write.DeleteRequest?.Key)),
          ),
        ),
      );
    for (const [table, writes] of Object.entries(requested)) {
      const schema = found.get(table) as TableSchema;
      for (const write of writes) {
        const put = write.PutRequest?.Item;
        const key = itemKey(schema, put ?? write.DeleteRequest?.Key);
        if (!key) return passThrough(call);
        const touched = throughput
          ? writePartitions(schema, put ? 'Put' : 'Delete', { Item: put, Key: write.DeleteRequest?.Key })
          : [];
        const conflicted = conflicts?.heldByTransaction(key) ?? false;
        const refused = conflicted ? undefined : refusing(touched, 'write', 1, now);
        if (conflicted) counters.writeConflicts += 1;
        if (conflicted || refused) {
          if (refused) {
            throttledItems += 1;
            firstRefused ??= { schema, touched: refused };
            refusedPartitions.push(refused.id);
          }
          unprocessed[table] = [...(unprocessed[table] ?? []), write];
          left += 1;
          continue;
        }
        outgoing[table] = [...(outgoing[table] ?? []), write];
        written.push({
          table,
          key,
          touched,
          weight: put ? Math.max(1, Math.ceil(itemSize(put) / 1024)) : 1,
          image: images?.get(write),
        });
      }
    }
    if (written.length === 0 && left > 0) {
      if (firstRefused) {
        return throttled(call, firstRefused.schema, firstRefused.touched, 'write');
      }
      return relay(call.res, {
        status: 200,
        headers: { 'content-type': 'application/x-amz-json-1.0' },
        body: json({ UnprocessedItems: unprocessed }),
      });
    }
    counters.throttles += throttledItems;
    for (const id of refusedPartitions) ledger?.throttled(id);
    const changed = left ? { ...input, RequestItems: outgoing } : undefined;
    const release = conflicts?.hold(
      'write',
      written.map((each) => each.key),
      config.transactionMs,
    );
    let answer: Upstream;
    try {
      const body = throughput ? askIndexes(call.body, input, changed) : changed ? json(changed) : call.body;
      answer = await forward(call.req, body);
    } finally {
      release?.();
    }
    if (answer.status !== 200) return relay(call.res, answer);
    const after = Date.now();
    for (const each of written) recent.record(each.table, each.key, after);
    await Promise.all(written.map((each) => (each.image ? ledger?.bill(each.image, false) : undefined)));
    let consumed: unknown;
    let out = answer.body;
    if (left) {
      const parsed = JSON.parse(answer.body.toString('utf8')) as {
        UnprocessedItems?: Record<string, WriteRequest[]>;
        [other: string]: unknown;
      };
      const merged = { ...parsed.UnprocessedItems };
      for (const [table, writes] of Object.entries(unprocessed))
        merged[table] = [...(merged[table] ?? []), ...writes];
      parsed.UnprocessedItems = merged;
      if (throughput) consumed = settleParsed(parsed, input.ReturnConsumedCapacity);
      out = json(parsed);
    } else if (throughput) {
      const settled = settle(call, answer);
      consumed = settled.consumed;
      out = settled.body;
    }
    if (throughput)
      for (const report of reportsOf(consumed)) {
        // The table's units (and each index's) shared among its items by size; index units only
        // among the items that name the index's partition.
        const items = written.filter((each) => each.table === report.TableName);
        const weight = items.reduce((sum, each) => sum + each.weight, 0);
        for (const each of items)
          for (const touched of each.touched) {
            if (!touched.index) {
              throughput.charge(touched.id, 'write', (tableUnits(report) * each.weight) / weight, after);
              continue;
            }
            const naming = items.filter((other) => other.touched.some((t) => t.index === touched.index));
            const share = naming.reduce((sum, other) => sum + other.weight, 0);
            throughput.charge(
              touched.id,
              'write',
              (indexUnits(report, touched.index) * each.weight) / share,
              after,
            );
          }
      }
    relay(call.res, answer, out);
  };

  const transactWrite = async (call: Call): Promise<void> => {
    const { input } = call;
    const token = input.ClientRequestToken;
    const actions = ((input.TransactItems ?? []) as Record<string, Input>[]).map((each) => {
      const [kind = '', action = {}] = Object.entries(each)[0] ?? [];
      return { kind, action };
    });
    const found = await schemasOf(actions.map((each) => each.action.TableName));
    if (!found) return passThrough(call);
    const keys: string[] = [];
    for (const { kind, action } of actions) {
      const key = itemKey(
        found.get(action.TableName as string) as TableSchema,
        kind === 'Put' ? action.Item : action.Key,
      );
      if (!key) return passThrough(call);
      keys.push(key);
    }
    const images = ledger?.images
      ? await Promise.all(
          actions.map(({ kind, action }) =>
            ledger.image(action.TableName as string, kind === 'Put' ? action.Item : action.Key),
          ),
        )
      : undefined;
    // From here to the holds nothing awaits: checks and holds are one step.
    if (token && conflicts?.tokenInFlight(token)) return fail(call.res, transactionInProgress());
    if (conflicts && keys.some((key) => conflicts.inFlight(key))) {
      counters.transactionConflicts += 1;
      ledger?.conflict(keys.filter((key) => conflicts.inFlight(key)));
      return fail(
        call.res,
        transactionCanceled(keys.map((key) => (conflicts.inFlight(key) ? conflictReason : { Code: 'None' }))),
      );
    }
    // A transaction's table writes cost twice, 2 units a KB (a Put's size is known; others count
    // their least), a ConditionCheck too; its index entries cost what they cost outside one.
    const touched = actions.map(({ kind, action }) =>
      throughput ? writePartitions(found.get(action.TableName as string) as TableSchema, kind, action) : [],
    );
    const now = Date.now();
    const refusals = touched.map((each) =>
      each.find((partition) => refusing([partition], 'write', partition.index ? 1 : 2, now)),
    );
    const reasons: CancellationReason[] = refusals.map((refused) =>
      refused ? throttleReason(Boolean(refused.index)) : { Code: 'None' },
    );
    if (reasons.some((reason) => reason.Code !== 'None')) {
      counters.throttles += 1;
      for (const refused of refusals) if (refused) ledger?.throttled(refused.id);
      return fail(call.res, transactionCanceled(reasons));
    }
    // The extra hold widens the window on purpose: the cap to AWS's run time is off then.
    const release = conflicts?.hold(
      'transaction',
      keys,
      config.conflictHoldMs > 0 ? 0 : config.transactionMs,
    );
    const releaseToken = token ? conflicts?.holdToken(token) : undefined;
    let answer: Upstream;
    try {
      answer = await forward(call.req, call.body);
      if (answer.status === 200 && conflicts && config.conflictHoldMs > 0) await sleep(config.conflictHoldMs);
    } finally {
      release?.();
      releaseToken?.();
    }
    if (answer.status === 200) {
      const after = Date.now();
      const billed: Promise<void>[] = [];
      actions.forEach(({ kind, action }, i) => {
        if (kind !== 'ConditionCheck') recent.record(action.TableName as string, keys[i] as string, after);
        const units =
          kind === 'Put' && action.Item ? 2 * Math.max(1, Math.ceil(itemSize(action.Item) / 1024)) : 2;
        for (const each of touched[i] ?? [])
          throughput?.charge(each.id, 'write', each.index ? 1 : units, after);
        const image = images?.[i];
        if (image && ledger) billed.push(ledger.bill(image, true, units));
      });
      ledger?.transaction(keys);
      await Promise.all(billed);
    }
    relay(call.res, answer);
  };

  const transactGet = async (call: Call): Promise<void> => {
    const { input } = call;
    const actions = ((input.TransactItems ?? []) as { Get?: Input }[]).map((each) => each.Get ?? {});
    const found = await schemasOf(actions.map((action) => action.TableName));
    if (!found) return passThrough(call);
    const keys: string[] = [];
    const touched: Touched[] = [];
    for (const action of actions) {
      const schema = found.get(action.TableName as string) as TableSchema;
      const key = itemKey(schema, action.Key);
      const hash = valueString(action.Key?.[schema.hash]);
      if (!key || hash === undefined) return passThrough(call);
      keys.push(key);
      touched.push({ id: partitionKey(schema.name, undefined, hash) });
    }
    if (conflicts && keys.some((key) => conflicts.inFlight(key))) {
      counters.transactionConflicts += 1;
      ledger?.conflict(keys.filter((key) => conflicts.inFlight(key)));
      return fail(
        call.res,
        transactionCanceled(keys.map((key) => (conflicts.inFlight(key) ? conflictReason : { Code: 'None' }))),
      );
    }
    if (!throughput) return passThrough(call);
    const now = Date.now();
    const reasons: CancellationReason[] = touched.map((each) =>
      refusing([each], 'read', 2, now) ? throttleReason(false) : { Code: 'None' },
    );
    if (reasons.some((reason) => reason.Code !== 'None')) {
      counters.throttles += 1;
      touched.forEach((each, i) => {
        if (reasons[i]?.Code !== 'None') ledger?.throttled(each.id);
      });
      return fail(call.res, transactionCanceled(reasons));
    }
    const answer = await forward(call.req, askIndexes(call.body, input));
    if (answer.status !== 200) return relay(call.res, answer);
    const settled = settle(call, answer);
    const after = Date.now();
    for (const report of reportsOf(settled.consumed)) {
      const mine = touched.filter((_, i) => actions[i]?.TableName === report.TableName);
      for (const each of mine) throughput.charge(each.id, 'read', tableUnits(report) / mine.length, after);
    }
    relay(call.res, answer, settled.body);
  };

  /** Table changes: the cached key schema is forgotten. */
  const tableChange = async (call: Call): Promise<void> => {
    const answer = await forward(call.req, call.body);
    if (call.input.TableName) {
      schemas.forget(call.input.TableName);
      ledger?.forget(call.input.TableName);
    }
    relay(call.res, answer);
  };

  const operations: Record<string, (call: Call) => Promise<void>> = {
    GetItem: getItem,
    PutItem: singleWrite,
    UpdateItem: singleWrite,
    DeleteItem: singleWrite,
    Query: queryOrScan,
    Scan: queryOrScan,
    BatchGetItem: batchGet,
    BatchWriteItem: batchWrite,
    TransactWriteItems: transactWrite,
    TransactGetItems: transactGet,
    CreateTable: tableChange,
    DeleteTable: tableChange,
    UpdateTable: tableChange,
  };

  // --- server -------------------------------------------------------------------------------------

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (ledger && req.url?.startsWith(LEDGER_PATH) && ledger.serve(req, res)) return;
    const body = await readBody(req);
    counters.requests += 1;
    const target = req.headers['x-amz-target'];
    const operation =
      typeof target === 'string' && target.startsWith(DYNAMODB_TARGET)
        ? target.slice(DYNAMODB_TARGET.length)
        : '';
    ledger?.request(operation);
    const handler = anyPart ? operations[operation] : undefined;
    if (!handler) return relay(res, await forward(req, body));
    if (typeof req.headers.authorization === 'string') authorization = req.headers.authorization;
    let input: Input;
    try {
      input = JSON.parse(body.toString('utf8')) as Input;
    } catch {
      return relay(res, await forward(req, body));
    }
    if (!input || typeof input !== 'object') return relay(res, await forward(req, body));
    await handler({ req, res, body, input, operation });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      if ((error as NodeJS.ErrnoException).code !== 'ECONNREFUSED')
        console.error('[dynamodb-semantics]', error);
      if (res.headersSent) return res.destroy();
      res.writeHead(500, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(
        JSON.stringify({
          __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError',
          message: `DynamoDB Local did not answer through the semantics layer: ${message}`,
        }),
      );
    });
  });
  // Longer than the SDK keeps an idle connection, so the server never closes one under a request.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const sweep = setInterval(() => throughput?.sweep(Date.now()), SWEEP_MS);
  sweep.unref();
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    config,
    stats: () => ({ ...counters, heldItems: conflicts?.held() ?? 0 }),
    ledger,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(sweep);
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}
