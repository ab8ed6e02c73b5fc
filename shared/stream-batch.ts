import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { beginRequest, logger } from './logger';
import { captureColdStart } from './metrics';

/**
 * The table stream's consumers (Powertools Batch), apart from shared/batch.ts: that module brings
 * the queue jobs' zod schemas and the X-Ray Tracer, which a zod-free worker (webhook-fanout,
 * test/infra/zod-free-bundles.test.ts) must not bundle.
 */

export interface StreamBatchSteps<Prepared> {
  /**
   * Once per batch, before any record: the work the batch shares (one BatchGetItem, one read per
   * organization, one bulk write). What fails for some records only belongs in what it returns, for
   * `handle` to throw for those records; throwing here fails every record of the batch.
   */
  prepare: (records: readonly DynamoDBRecord[], context: Context) => Promise<Prepared>;
  /** Each record, in stream order, with what `prepare` returned; throwing reports exactly this record. */
  handle: (record: DynamoDBRecord, prepared: Prepared, context: Context) => Promise<void>;
}

/**
 * A stream consumer that prepares the whole batch once, then handles each record: a record whose
 * handling throws is logged and reported (`batchItemFailures`, its sequence number), and no other.
 * Lambda retries from the lowest one reported, halving the batch on each error (bisect), so a
 * record that keeps failing ends alone in the worker's on-failure queue, not with its neighbours.
 */
export function streamBatchWorker<Prepared>(
  name: string,
  { prepare, handle }: StreamBatchSteps<Prepared>,
): (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse> {
  return async (event, context) => {
    beginRequest(context.awsRequestId);
    captureColdStart();
    let prepared: { ok: true; value: Prepared } | { ok: false; error: unknown };
    try {
      prepared = { ok: true, value: await prepare(event.Records, context) };
    } catch (error) {
      // Logged once here rather than once per record.
      logger.error(`${name} failed for the whole batch`, {
        error: error as Error,
        records: event.Records.length,
      });
      prepared = { ok: false, error };
    }
    // A processor per batch: it holds the batch's outcomes, and the local stack may hand one
    // instance the batches of two shards at once.
    const processor = new BatchProcessor(EventType.DynamoDBStreams);
    return processPartialResponse(
      event,
      async (record: DynamoDBRecord) => {
        if (!prepared.ok) throw prepared.error;
        try {
          await handle(record, prepared.value, context);
        } catch (error) {
          logger.error(`${name} failed`, {
            error: error as Error,
            sequenceNumber: record.dynamodb?.SequenceNumber,
          });
          throw error;
        }
      },
      processor,
      { context, processInParallel: false, throwOnFullBatchFailure: false },
    );
  };
}
