import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
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

/**
 * A queue consumer (Powertools Batch): each message's job validated with its queue's schema, then
 * handled; a message whose job is malformed or whose handling throws is logged and reported back,
 * so SQS delivers it again and, after the queue's receives, moves it to the dead-letter queue.
 */
export function queueWorker<Q extends QueueName>(
  queue: Q,
  handle: (job: QueueJob<Q>, record: SQSRecord, context: Context) => Promise<void>,
  { parallel = false }: WorkerOptions = {},
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  return async (event, context) => {
    beginRequest(context.awsRequestId);
    observeQueueBatch(event.Records, clock.nowMs());
    // A processor per batch: it holds the batch's failures, and locally several pollers invoke one
    // instance at once (in Lambda an instance runs one batch at a time).
    const processor = new BatchProcessor(EventType.SQS);
    return processPartialResponse(
      event,
      async (record: SQSRecord) => {
        try {
          await handle(parseJob(queue, record.body), record, context);
        } catch (error) {
          logger.error('job failed', { error: error as Error, queue, messageId: record.messageId });
          throw error;
        }
      },
      processor,
      { context, processInParallel: parallel, throwOnFullBatchFailure: false },
    );
  };
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
