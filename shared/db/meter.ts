import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { logger } from '../logger';

/** Commands that write (their consumed capacity is write units). */
export const WRITE_COMMANDS: ReadonlySet<string> = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
]);
/** Commands that accept `ReturnConsumedCapacity`. */
export const CAPACITY_COMMANDS: ReadonlySet<string> = new Set([
  ...WRITE_COMMANDS,
  'GetItemCommand',
  'QueryCommand',
  'ScanCommand',
  'BatchGetItemCommand',
  'TransactGetItemsCommand',
]);

const THROTTLING_ERRORS: ReadonlySet<string> = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
]);

/** One `ConsumedCapacity` report (TOTAL, or INDEXES with the table and index parts). */
export interface CapacityReport {
  CapacityUnits?: number;
  Table?: { CapacityUnits?: number };
  GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
}

/** The reports of one response: a single object, or one per table for batches and transactions. */
export function capacityReports(consumed: unknown): readonly CapacityReport[] {
  if (Array.isArray(consumed)) return consumed as CapacityReport[];
  return consumed ? [consumed as CapacityReport] : [];
}

/** What one request (or worker invocation) cost in DynamoDB, for its access-log line and metrics. */
export interface DynamoUsage {
  /** Commands sent (a retried command counts once). */
  commands: number;
  /** HTTP attempts, retries included: what the network and the latency saw. */
  attempts: number;
  /** Attempts DynamoDB answered with a throttling error. */
  throttles: number;
  readUnits: number;
  writeUnits: number;
}

/** One command of a measured invocation, as the bench reads it (traced invocations only). */
export interface DynamoCommandTrace {
  /** `GetItem`, `TransactWriteItems`… */
  operation: string;
  /** Sent while none of the invocation's other commands was in flight: a round trip of its own. */
  newTrip: boolean;
  readUnits: number;
  writeUnits: number;
  /** Units by where they landed (ReturnConsumedCapacity INDEXES): `table` and each index by name. */
  unitsBy: Record<string, number>;
  /** A single-item command's partition key (rate windows and idempotency records are told by theirs). */
  pk?: string;
  /** A TransactWriteItems' actions, in order. */
  actions?: { kind: string; pk: string; sk: string }[];
  /** The checkout's source files on the sending stack, innermost first: which code sent it. */
  origin: string[];
}

/** What one invocation cost, measured on its own even while others run in the same instance. */
export interface InvocationUsage extends DynamoUsage {
  /** Round trips one after another: commands sent while another of the invocation's is in flight share its trip. */
  trips: number;
  /** Every command, in order, when the invocation was traced. */
  trace?: DynamoCommandTrace[];
}

/**
 * Usage outside a measured invocation. A Lambda instance serves one request at a time, so module
 * state is exact there; the local runtime measures each invocation in a scope of its own
 * (`dynamoMeter.invocation`), so concurrent requests of one local instance do not mix.
 */
const usage: DynamoUsage = { commands: 0, attempts: 0, throttles: 0, readUnits: 0, writeUnits: 0 };

interface Scope {
  usage: InvocationUsage;
  inFlight: number;
  traced: boolean;
}
/** Entered only by the local runtime (infra/local/isolate-main.ts); in Lambda `getStore()` is always undefined. */
const scopes = new AsyncLocalStorage<Scope>();

const zero = (counts: DynamoUsage) => {
  counts.commands = 0;
  counts.attempts = 0;
  counts.throttles = 0;
  counts.readUnits = 0;
  counts.writeUnits = 0;
};

export const dynamoMeter = {
  /** Zeroes the current usage (the measured invocation's, inside one). */
  reset(): void {
    const scope = scopes.getStore();
    if (!scope) {
      zero(usage);
      return;
    }
    zero(scope.usage);
    scope.usage.trips = 0;
    if (scope.usage.trace) scope.usage.trace = [];
  },
  /** The live counters (read them at once: background work keeps moving them). */
  get current(): Readonly<DynamoUsage> {
    return scopes.getStore()?.usage ?? usage;
  },
  /**
   * A measured invocation: what `run` (and everything it starts) sends is counted in `usage` and
   * nowhere else; `trace` also records each command with its units by index, its key and the code
   * that sent it (a stack capture per command: for the bench, not for serving).
   */
  invocation(options: { trace?: boolean } = {}): {
    usage: InvocationUsage;
    run<T>(body: () => T): T;
  } {
    const scope: Scope = {
      usage: { commands: 0, attempts: 0, throttles: 0, readUnits: 0, writeUnits: 0, trips: 0 },
      inFlight: 0,
      traced: options.trace === true,
    };
    if (scope.traced) scope.usage.trace = [];
    return {
      get usage() {
        return scope.usage;
      },
      run: (body) => scopes.run(scope, body),
    };
  },
};

/** A key attribute as the document client passes it, or marshalled (`{ S }`). */
function keyText(value: unknown): string {
  if (typeof value === 'string') return value;
  const marshalled = (value as { S?: unknown } | undefined)?.S;
  return typeof marshalled === 'string' ? marshalled : '';
}

/** The checkout's files (not the SDK's, not this one) on the stack, innermost first. */
function origin(): string[] {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 80;
  const stack = new Error().stack ?? '';
  Error.stackTraceLimit = limit;
  const root = `${process.cwd()}/`;
  const files: string[] = [];
  for (const match of stack.matchAll(/(?:file:\/\/)?(\/[^\s():]+\.[cm]?[jt]s):\d+:\d+/g)) {
    const file = (match[1] ?? '').replace(root, '');
    if (file.includes('node_modules') || file.endsWith('shared/db/meter.ts')) continue;
    if (files.at(-1) !== file) files.push(file);
  }
  return files;
}

function traceOf(name: string, input: Record<string, unknown>): DynamoCommandTrace {
  const entry: DynamoCommandTrace = {
    operation: name.replace(/Command$/, ''),
    newTrip: false,
    readUnits: 0,
    writeUnits: 0,
    unitsBy: {},
    origin: origin(),
  };
  const pk = keyText((input.Key as { pk?: unknown } | undefined)?.pk);
  if (pk) entry.pk = pk;
  if (name === 'TransactWriteItemsCommand') {
    entry.actions = (
      (input.TransactItems as Record<string, Record<string, unknown>>[] | undefined) ?? []
    ).map((item) => {
      const [kind = '', action = {}] = Object.entries(item)[0] ?? [];
      const key = (kind === 'Put' ? action.Item : action.Key) as { pk?: unknown; sk?: unknown } | undefined;
      return { kind, pk: keyText(key?.pk), sk: keyText(key?.sk) };
    });
  }
  return entry;
}

/**
 * Meters every command of the client: asks DynamoDB for the consumed capacity (TOTAL, unless the
 * caller asked for more), counts commands, HTTP attempts and throttled attempts. The document client
 * shares the low-level client's middleware stack, so one registration covers both.
 */
export function meterDynamo(client: DynamoDBClient): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName ?? '';
      const scope = scopes.getStore();
      const counts = scope?.usage ?? usage;
      counts.commands += 1;
      const input = args.input as { ReturnConsumedCapacity?: string } & Record<string, unknown>;
      let entry: DynamoCommandTrace | undefined;
      if (scope) {
        if (scope.inFlight === 0) scope.usage.trips += 1;
        if (scope.traced) {
          entry = traceOf(name, input);
          entry.newTrip = scope.inFlight === 0;
          scope.usage.trace?.push(entry);
          // DynamoDB (and DynamoDB Local) then reports the index writes too.
          if (CAPACITY_COMMANDS.has(name)) input.ReturnConsumedCapacity = 'INDEXES';
        }
        scope.inFlight += 1;
      }
      try {
        if (!CAPACITY_COMMANDS.has(name)) return await next(args);
        input.ReturnConsumedCapacity ??= 'TOTAL';
        const result = await next(args);
        const write = WRITE_COMMANDS.has(name);
        let units = 0;
        for (const report of capacityReports(
          (result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity,
        )) {
          units += report.CapacityUnits ?? 0;
          if (!entry) continue;
          entry.unitsBy.table = (entry.unitsBy.table ?? 0) + (report.Table?.CapacityUnits ?? 0);
          for (const [index, part] of Object.entries(report.GlobalSecondaryIndexes ?? {}))
            entry.unitsBy[index] = (entry.unitsBy[index] ?? 0) + (part.CapacityUnits ?? 0);
        }
        if (write) counts.writeUnits += units;
        else counts.readUnits += units;
        if (entry) {
          if (write) entry.writeUnits = units;
          else entry.readUnits = units;
        }
        logger.debug('dynamodb', {
          command: name,
          capacityUnits: units,
          attempts: (result.output as { $metadata?: { attempts?: number } }).$metadata?.attempts,
        });
        return result;
      } finally {
        if (scope) scope.inFlight -= 1;
      }
    },
    { step: 'initialize', priority: 'low', name: 'meterDynamoCommands' },
  );
  // The deserialize step runs once per HTTP attempt, inside the SDK's retry loop; high priority puts
  // this outside the deserializer, where a throttling answer has become its named error.
  client.middlewareStack.add(
    (next) => async (args) => {
      const counts = scopes.getStore()?.usage ?? usage;
      counts.attempts += 1;
      try {
        return await next(args);
      } catch (error) {
        if (error instanceof Error && THROTTLING_ERRORS.has(error.name)) counts.throttles += 1;
        throw error;
      }
    },
    { step: 'deserialize', priority: 'high', name: 'meterDynamoAttempts' },
  );
}
