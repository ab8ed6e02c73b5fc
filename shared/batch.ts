import { BatchProcessor, EventType } from '@aws-lambda-powertools/batch';
import { Tracer } from '@aws-lambda-powertools/tracer';
import type {
  Context,
  DynamoDBBatchResponse,
  DynamoDBRecord,
  DynamoDBStreamEvent,
  SQSBatchResponse,
  SQSEvent,
  SQSRecord,
} from 'aws-lambda';
import { clock } from './clock';
import { beginRequest, logger } from './logger';
import { observeQueueBatch } from './metrics';
import { METRICS_SERVICE } from './metrics-contract';
import { type QueueJob, type QueueName, queueJobs } from './queue-jobs';
import { streamBatchWorker } from './stream-batch';
import { traceClientsWith } from './tracing';

// Workers are not in front of a person: their SDK calls are X-Ray subsegments (shared/tracing.ts).
traceClientsWith(new Tracer({ serviceName: METRICS_SERVICE }));

/** A queue message's job: its body as JSON, validated with the queue's schema (shared/queue-jobs.ts). */
export function parseJob<Q extends QueueName>(queue: Q, body: string): QueueJob<Q> {
  return queueJobs[queue].parse(JSON.parse(body)) as QueueJob<Q>;
}

/** How records of one batch run: one after another (the default), or all at once. */
interface WorkerOptions {
  parallel?: boolean;
}

export interface QueueBatchSteps<Q extends QueueName, Prepared, Pending> {
  /**
   * Once per batch, before any message, with the jobs that parsed: the reads the batch shares.
   * Throwing here fails the invocation, so SQS delivers the whole batch again.
   */
  prepare: (jobs: readonly QueueJob<Q>[], context: Context) => Promise<Prepared>;
  /**
   * Each message, with what `prepare` returned; throwing reports exactly this message. A value it
   * returns is held for `commit`.
   */
  handle: (
    job: QueueJob<Q>,
    record: SQSRecord,
    prepared: Prepared,
    context: Context,
  ) => Promise<Pending | undefined>;
  /**
   * Once per batch, after every message, with the values `handle` returned: the write they share
   * (a BatchWriteItem). Throwing reports every message whose value it was given, and only those.
   */
  commit?: (pending: Pending[], prepared: Prepared, context: Context) => Promise<void>;
}

/**
 * A queue consumer (Powertools Batch) that prepares the batch once, then handles each message: a
 * message whose job is malformed or whose handling (or its share of `commit`) fails is logged and
 * reported back, so SQS delivers it again and, after the queue's receives, moves it to the
 * dead-letter queue.
 */
export function queueBatchWorker<Q extends QueueName, Prepared, Pending = never>(
  queue: Q,
  { prepare, handle, commit = async () => undefined }: QueueBatchSteps<Q, Prepared, Pending>,
  { parallel = false }: WorkerOptions = {},
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const logFailure = (error: unknown, record: SQSRecord) =>
    logger.error('job failed', { error: error as Error, queue, messageId: record.messageId });
  return async (event, context) => {
    beginRequest(context.awsRequestId);
    observeQueueBatch(event.Records, clock.nowMs());
    // Parsed up front: `prepare` sees every job of the batch; a malformed one fails in its own turn.
    const jobs = new Map<SQSRecord, { job: QueueJob<Q> } | { error: unknown }>();
    for (const record of event.Records) {
      try {
        jobs.set(record, { job: parseJob(queue, record.body) });
      } catch (error) {
        jobs.set(record, { error });
      }
    }
    const prepared = await prepare(
      [...jobs.values()].flatMap((each) => ('job' in each ? [each.job] : [])),
      context,
    );
    // A processor per batch: it holds the batch's failures, and locally several pollers invoke one
    // instance at once (in Lambda an instance runs one batch at a time).
    const processor = new BatchProcessor(EventType.SQS);
    processor.register(
      event.Records,
      async (record: SQSRecord) => {
        try {
          const parsed = jobs.get(record);
          if (!parsed || 'error' in parsed) throw parsed?.error;
          return await handle(parsed.job, record, prepared, context);
        } catch (error) {
          logFailure(error, record);
          throw error;
        }
      },
      { context, processInParallel: parallel, throwOnFullBatchFailure: false },
    );
    const processed = await processor.process();
    // A copy: with no failure, Powertools answers with a response object all its processors share.
    const batchItemFailures = [...processor.response().batchItemFailures];
    const pending = processed.flatMap(([status, value, record]) =>
      status === 'success' && value !== undefined
        ? [{ value: value as Pending, record: record as SQSRecord }]
        : [],
    );
    try {
      await commit(
        pending.map(({ value }) => value),
        prepared,
        context,
      );
    } catch (error) {
      for (const { record } of pending) {
        logFailure(error, record);
        batchItemFailures.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures };
  };
}

/** A queue consumer whose messages share nothing: each job validated with its queue's schema, then handled. */
export function queueWorker<Q extends QueueName>(
  queue: Q,
  handle: (job: QueueJob<Q>, record: SQSRecord, context: Context) => Promise<void>,
  options: WorkerOptions = {},
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  return queueBatchWorker(
    queue,
    {
      prepare: async () => undefined,
      handle: async (job, record, _prepared, context) => {
        await handle(job, record, context);
        return undefined;
      },
    },
    options,
  );
}

/**
 * A consumer of the table's stream, record by record (shared/stream-batch.ts): a record whose
 * handling throws is logged and reported, and no other.
 */
export function streamWorker(
  name: string,
  handle: (record: DynamoDBRecord, context: Context) => Promise<void>,
): (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse> {
  return streamBatchWorker(name, {
    prepare: async () => undefined,
    handle: (record, _prepared, context) => handle(record, context),
  });
}
