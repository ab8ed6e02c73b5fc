import { countRecords } from '../../shared/db/stats-stream';
import { usageCounting } from '../../shared/db/usage-stream';
import { streamBatchWorker } from '../../shared/stream-batch';

/**
 * Stream consumer: counts what each organization did into its usage (shared/db/usage-stream.ts),
 * each record once. A record whose count could not commit in time is reported, and the stream
 * delivers it again; its marker makes a second count impossible.
 */
export const handler = streamBatchWorker('usage meter', {
  prepare: (records) => countRecords(records, usageCounting),
  handle: async (record, uncounted) => {
    if (record.eventID && uncounted.has(record.eventID))
      throw new Error('not counted into usage: delivered again');
  },
});
