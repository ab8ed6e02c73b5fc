import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { beginRequest, logger } from '../../shared/logger';
import { captureColdStart, publishSearchIndexLag } from '../../shared/metrics';
import { searchPool } from '../../shared/search/connection';
import { rowsOfStreamRecord } from '../../shared/search/projection';
import { writeRows } from '../../shared/search/writer';

/**
 * Stream consumer: projects organizations, conversations, messages and notes into the search
 * index. Rows are versioned by their source item, so the batch is written whole and may be written
 * again: a failure reports the batch's first record, and the stream delivers it all again.
 */
export const handler = async (
  event: DynamoDBStreamEvent,
  context: Context,
): Promise<DynamoDBBatchResponse> => {
  beginRequest(context.awsRequestId);
  captureColdStart();
  const rows = event.Records.flatMap((record) => rowsOfStreamRecord(record));
  try {
    if (rows.length > 0) await writeRows(searchPool(), rows);
  } catch (error) {
    logger.error('search index not written', { error: error as Error, records: event.Records.length });
    const first = event.Records[0]?.dynamodb?.SequenceNumber;
    return { batchItemFailures: first ? [{ itemIdentifier: first }] : [] };
  }
  // Not through shared/batch.ts: the batch is written whole (one statement), so it fails whole.
  const now = Date.now();
  const lags: number[] = [];
  for (const record of event.Records) {
    const committed = record.dynamodb?.ApproximateCreationDateTime;
    if (committed) lags.push(Math.max(0, now - committed * 1000));
  }
  publishSearchIndexLag(lags);
  return { batchItemFailures: [] };
};
