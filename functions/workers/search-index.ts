import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { log } from '../../shared/logger';
import { captureColdStart, type MetricEntry, publishFunctionMetrics, Unit } from '../../shared/metrics';
import { SEARCH_METRICS } from '../../shared/metrics-contract';
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
  log.beginRequest(context.awsRequestId);
  captureColdStart();
  const rows = event.Records.flatMap((record) => rowsOfStreamRecord(record));
  try {
    if (rows.length > 0) await writeRows(searchPool(), rows);
  } catch (error) {
    log.error('search index not written', { error: error as Error, records: event.Records.length });
    const first = event.Records[0]?.dynamodb?.SequenceNumber;
    return { batchItemFailures: first ? [{ itemIdentifier: first }] : [] };
  }
  const now = Date.now();
  const lags: MetricEntry[] = [];
  for (const record of event.Records) {
    const committed = record.dynamodb?.ApproximateCreationDateTime;
    if (committed)
      lags.push([SEARCH_METRICS.indexLag, Unit.Milliseconds, Math.max(0, now - committed * 1000)]);
  }
  try {
    publishFunctionMetrics(lags);
  } catch (error) {
    log.warn('metrics not published', { error: error instanceof Error ? error.message : String(error) });
  }
  return { batchItemFailures: [] };
};
