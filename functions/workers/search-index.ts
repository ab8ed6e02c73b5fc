import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import pg from 'pg';
import { logger } from '../../shared/logger';
import { publishSearchIndexLag } from '../../shared/metrics';
import { searchPool } from '../../shared/search/connection';
import { type IndexRow, rowsOfStreamRecord } from '../../shared/search/projection';
import { writeRows } from '../../shared/search/writer';
import { streamBatchWorker } from '../../shared/stream-batch';

/** Each record's rows (or why it has none), and whether the one write of them all went through. */
interface Projected {
  rows: Map<DynamoDBRecord, IndexRow[] | { error: unknown }>;
  written: boolean;
}

/**
 * Stream consumer: projects organizations, conversations, messages and notes into the search
 * index. Rows are versioned by their source item, so any row may be written again. The batch's rows
 * go in one statement; a row the database refuses fails that statement whole, so then they go
 * record by record (in stream order) and only the records whose own rows are refused are reported.
 */
const indexBatch = streamBatchWorker<Projected>('search index', {
  async prepare(records) {
    const rows: Projected['rows'] = new Map();
    for (const record of records) {
      try {
        rows.set(record, rowsOfStreamRecord(record));
      } catch (error) {
        rows.set(record, { error });
      }
    }
    const all = [...rows.values()].flatMap((each) => (Array.isArray(each) ? each : []));
    try {
      if (all.length > 0) await writeRows(searchPool(), all);
      return { rows, written: true };
    } catch (error) {
      // No answer from the database (unreachable, a connection timeout of 20 s) is no record's
      // fault, and a hundred more tries would each wait as long: the whole batch is retried.
      if (!(error instanceof pg.DatabaseError)) throw error;
      logger.warn('search index batch refused: writing record by record', {
        error,
        records: records.length,
      });
      return { rows, written: false };
    }
  },
  async handle(record, { rows, written }) {
    const mine = rows.get(record) ?? [];
    if (!Array.isArray(mine)) throw mine.error;
    if (!written && mine.length > 0) await writeRows(searchPool(), mine);
  },
});

export const handler = async (
  event: DynamoDBStreamEvent,
  context: Context,
): Promise<DynamoDBBatchResponse> => {
  const result = await indexBatch(event, context);
  // How late each change the index now holds arrived (a reported record's is not there yet).
  const failed = new Set(result.batchItemFailures.map((failure) => failure.itemIdentifier));
  const now = Date.now();
  const lags: number[] = [];
  for (const record of event.Records) {
    const committed = record.dynamodb?.ApproximateCreationDateTime;
    if (committed && !failed.has(record.dynamodb?.SequenceNumber ?? ''))
      lags.push(Math.max(0, now - committed * 1000));
  }
  publishSearchIndexLag(lags);
  return result;
};
