import {
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';

/**
 * Opening and reading one shard of the table's stream, apart from the reader's loop: where a shard
 * starts (the newest record, a saved one, the oldest) and the fall-back when the records it points
 * at have aged out of the stream take more care than the loop itself.
 */

/** GetRecords returns at most this many records per call. */
export const READ_LIMIT = 1000;

/** Where a shard is first read from. */
export type StartAt =
  /** The newest record (no saved position, nothing to keep one in): what the reader always did. */
  | { type: 'LATEST' }
  /** The same start, at a known record: the shard is read through (handed to no one) first. */
  | { type: 'END' }
  | { type: 'TRIM_HORIZON' }
  | { type: 'AFTER_SEQUENCE_NUMBER'; sequenceNumber: string };

export interface ShardState {
  /** Undefined once the shard is closed and read to its end. */
  iterator: string | undefined;
  /** Sequence numbers read and not yet handled by every subscriber, oldest first. */
  unconfirmed: string[];
  /** The last record every subscriber has handled: where a restart resumes. */
  handled: string | null;
}

/** `open` and `read` for the shards of one stream; `onError` hears of records lost to trimming. */
export function shardAccess(
  streams: DynamoDBStreamsClient,
  streamArn: string,
  onError: (error: unknown) => void,
) {
  const iteratorOf = async (shardId: string, start: Exclude<StartAt, { type: 'END' }>) =>
    (
      await streams.send(
        new GetShardIteratorCommand({
          StreamArn: streamArn,
          ShardId: shardId,
          ShardIteratorType: start.type,
          ...(start.type === 'AFTER_SEQUENCE_NUMBER' ? { SequenceNumber: start.sequenceNumber } : {}),
        }),
      )
    ).ShardIterator;

  /** The records the reader had yet to reach are gone: older than the stream keeps (24 hours, in DynamoDB Local too). */
  const trimmed = (error: unknown, shardId: string): boolean => {
    if ((error as Error).name !== 'TrimmedDataAccessException') return false;
    onError(
      new Error(
        `stream shard ${shardId}: records not yet handed over are older than the stream keeps (24 hours) and gone; reading from the oldest kept`,
      ),
    );
    return true;
  };

  /** One read of a shard; if the records it points at were trimmed, from the oldest record kept. */
  const read = async (shardId: string, iterator: string) => {
    try {
      return await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: READ_LIMIT }));
    } catch (error) {
      if (!trimmed(error, shardId)) throw error;
      const oldest = await iteratorOf(shardId, { type: 'TRIM_HORIZON' });
      return streams.send(new GetRecordsCommand({ ShardIterator: oldest, Limit: READ_LIMIT }));
    }
  };

  const open = async (shardId: string, start: StartAt): Promise<ShardState> => {
    if (start.type === 'END') {
      // Everything the shard holds now is passed over, and the last record of it noted.
      let iterator = await iteratorOf(shardId, { type: 'TRIM_HORIZON' });
      let last: string | null = null;
      while (iterator) {
        const result = await read(shardId, iterator);
        const records = result.Records ?? [];
        last = records.at(-1)?.dynamodb?.SequenceNumber ?? last;
        iterator = result.NextShardIterator;
        if (records.length === 0) break;
      }
      return { iterator, unconfirmed: [], handled: last };
    }
    const handled = start.type === 'AFTER_SEQUENCE_NUMBER' ? start.sequenceNumber : null;
    try {
      return { iterator: await iteratorOf(shardId, start), unconfirmed: [], handled };
    } catch (error) {
      // DynamoDB says so here; DynamoDB Local at the first read (see `read`).
      if (!trimmed(error, shardId)) throw error;
      return { iterator: await iteratorOf(shardId, { type: 'TRIM_HORIZON' }), unconfirmed: [], handled };
    }
  };

  return { open, read };
}
