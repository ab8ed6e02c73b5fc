import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { logger } from '../../shared/logger';
import { type StreamPart, type StreamPartName, streamRouterParts } from '../workers';

/**
 * The table stream's general reader: one event source instead of one per consumer, since AWS
 * throttles a shard's third reader (functions/workers.ts, `streamRouterParts`). Each part receives
 * the batch's records of its entities, as a worker of its own would, and all parts run at once: the
 * batch takes as long as its slowest part, not their sum. A record a part reports failed is reported
 * for the batch; Lambda then delivers again from the lowest one reported, to every part, so each part
 * is idempotent on a redelivery as it already was on its own.
 */

type StreamHandler = (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse>;

/**
 * Loaded on the first batch that has records for them: a batch of events alone never evaluates the
 * other parts' modules (webhook-fanout stays free of zod and the tracer on its cold path).
 */
const modules: Record<StreamPartName, () => Promise<{ handler: StreamHandler }>> = {
  'realtime-push': () => import('./realtime-push'),
  'webhook-fanout': () => import('./webhook-fanout'),
  'conversation-changes': () => import('./conversation-changes'),
  counters: () => import('./counters'),
};

/** Whether `part` takes `record`: one of its entities (or a removal it asks for), and not older than it cares for. */
function takes(part: StreamPart, record: DynamoDBRecord, nowSeconds: number): boolean {
  const entity = record.dynamodb?.NewImage?.entity?.S;
  const removed = record.eventName === 'REMOVE' ? record.dynamodb?.OldImage?.entity?.S : undefined;
  const wanted =
    (entity !== undefined && part.entities.includes(entity)) ||
    (removed !== undefined && (part.removals ?? []).includes(removed));
  if (!wanted) return false;
  const createdAt = record.dynamodb?.ApproximateCreationDateTime;
  return (
    part.maxRecordAgeSeconds === undefined ||
    createdAt === undefined ||
    nowSeconds - createdAt <= part.maxRecordAgeSeconds
  );
}

async function runPart(
  part: StreamPart & { name: StreamPartName },
  records: DynamoDBRecord[],
  context: Context,
): Promise<DynamoDBBatchResponse['batchItemFailures']> {
  try {
    const { handler: handle } = await modules[part.name]();
    const { batchItemFailures } = await handle({ Records: records }, context);
    return batchItemFailures;
  } catch (error) {
    // A part that fails as a whole (its module would not load) reports every record it was given.
    logger.error(`stream part ${part.name} failed for its whole share of the batch`, {
      error: error as Error,
      records: records.length,
    });
    return records.flatMap((record) =>
      record.dynamodb?.SequenceNumber ? [{ itemIdentifier: record.dynamodb.SequenceNumber }] : [],
    );
  }
}

export async function handler(event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> {
  const nowSeconds = Date.now() / 1000;
  const failures = await Promise.all(
    streamRouterParts.map((part) => {
      const records = event.Records.filter((record) => takes(part, record, nowSeconds));
      return records.length ? runPart(part, records, context) : Promise.resolve([]);
    }),
  );
  const reported = new Set(failures.flat().map((failure) => failure.itemIdentifier));
  return { batchItemFailures: [...reported].map((itemIdentifier) => ({ itemIdentifier })) };
}
