import { countRecords } from '../../shared/db/stats-stream';
import { streamBatchWorker } from '../../shared/stream-batch';

/**
 * Stream consumer: counts each record once into the organization's daily aggregates (analytics,
 * CSAT) and its usage (shared/db/stats-stream.ts, shared/db/usage-stream.ts), with one marker per
 * record for both. A record whose count could not commit in time is reported, and the stream
 * delivers it again; its marker makes a second count impossible.
 */
export const handler = streamBatchWorker('counters', {
  prepare: (records) => countRecords(records),
  handle: async (record, uncounted) => {
    if (record.eventID && uncounted.has(record.eventID)) throw new Error('not counted: delivered again');
  },
});
