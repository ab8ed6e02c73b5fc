import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { beginRequest, logger } from '../../shared/logger';
import { captureColdStart } from '../../shared/metrics';
import { queues } from '../../shared/queues';

/** A purge job: the organization and soft-deleted conversation whose texts are to be purged. */
export interface PurgeJob {
  orgId: string;
  conversationId: string;
  /** Where a previous step stopped: the last sort key it handled, or the prefix of the next kind (`purgeStep`). */
  after?: string;
}

/** The purge job a stream record asks for: a conversation whose `deletedAt` was just set. */
export function purgeJobOf(record: DynamoDBRecord): PurgeJob | undefined {
  const next = record.dynamodb?.NewImage;
  const previous = record.dynamodb?.OldImage;
  if (record.eventName !== 'MODIFY' || next?.entity?.S !== 'conversation') return undefined;
  const deletedNow = next.deletedAt?.S !== undefined;
  const deletedBefore = previous?.deletedAt?.S !== undefined;
  if (!deletedNow || deletedBefore) return undefined;
  const orgId = next.organizationId?.S;
  const conversationId = next.id?.S;
  return orgId && conversationId ? { orgId, conversationId } : undefined;
}

/**
 * Stream consumer: each conversation that became soft-deleted gets a purge job. The deletion
 * committed before this runs, so no job is sent for a deletion that did not happen, and none is
 * lost: a failed send reports its record, and the stream delivers it again.
 */
export const handler = async (
  event: DynamoDBStreamEvent,
  context: Context,
): Promise<DynamoDBBatchResponse> => {
  beginRequest(context.awsRequestId);
  captureColdStart();
  const wanted = event.Records.map((record) => ({ record, job: purgeJobOf(record) })).filter(
    (entry): entry is { record: DynamoDBRecord; job: PurgeJob } => entry.job !== undefined,
  );
  for (let start = 0; start < wanted.length; start += 10) {
    const chunk = wanted.slice(start, start + 10);
    let failed: number[];
    try {
      failed = await queues.sendBatch(
        'conversation-purge',
        chunk.map((entry) => entry.job),
      );
    } catch (error) {
      logger.error('purge jobs not sent', { error: error as Error });
      failed = chunk.map((_, i) => i);
    }
    const first = failed.length ? Math.min(...failed) : -1;
    const record = first >= 0 ? chunk[first]?.record : undefined;
    if (record?.dynamodb?.SequenceNumber) {
      // Stream batches are retried from the first failed record onwards.
      return { batchItemFailures: [{ itemIdentifier: record.dynamodb.SequenceNumber }] };
    }
  }
  return { batchItemFailures: [] };
};
