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

/**
 * The current request's usage. A Lambda instance serves one request at a time, so module state is
 * exact there; the local gateway runs concurrent requests in one process, where the figures of
 * overlapping requests mix (local access lines are indicative only).
 */
const usage: DynamoUsage = { commands: 0, attempts: 0, throttles: 0, readUnits: 0, writeUnits: 0 };

export const dynamoMeter = {
  reset(): void {
    usage.commands = 0;
    usage.attempts = 0;
    usage.throttles = 0;
    usage.readUnits = 0;
    usage.writeUnits = 0;
  },
  /** The live counters (read them at once: background work keeps moving them). */
  get current(): Readonly<DynamoUsage> {
    return usage;
  },
};

/**
 * Meters every command of the client: asks DynamoDB for the consumed capacity (TOTAL, unless the
 * caller asked for more), counts commands, HTTP attempts and throttled attempts. The document client
 * shares the low-level client's middleware stack, so one registration covers both.
 */
export function meterDynamo(client: DynamoDBClient): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName ?? '';
      usage.commands += 1;
      if (!CAPACITY_COMMANDS.has(name)) return next(args);
      const input = args.input as { ReturnConsumedCapacity?: string };
      input.ReturnConsumedCapacity ??= 'TOTAL';
      const result = await next(args);
      let units = 0;
      for (const report of capacityReports(
        (result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity,
      ))
        units += report.CapacityUnits ?? 0;
      if (WRITE_COMMANDS.has(name)) usage.writeUnits += units;
      else usage.readUnits += units;
      logger.debug('dynamodb', {
        command: name,
        capacityUnits: units,
        attempts: (result.output as { $metadata?: { attempts?: number } }).$metadata?.attempts,
      });
      return result;
    },
    { step: 'initialize', priority: 'low', name: 'meterDynamoCommands' },
  );
  // The deserialize step runs once per HTTP attempt, inside the SDK's retry loop; high priority puts
  // this outside the deserializer, where a throttling answer has become its named error.
  client.middlewareStack.add(
    (next) => async (args) => {
      usage.attempts += 1;
      try {
        return await next(args);
      } catch (error) {
        if (error instanceof Error && THROTTLING_ERRORS.has(error.name)) usage.throttles += 1;
        throw error;
      }
    },
    { step: 'deserialize', priority: 'high', name: 'meterDynamoAttempts' },
  );
}
