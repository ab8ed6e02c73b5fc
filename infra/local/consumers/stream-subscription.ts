import type { _Record } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord } from 'aws-lambda';
import { lambdaContext } from '../lambda-event';
import { type StreamHandler, sleep } from './consumer';

/**
 * One worker's share of the table's stream. Locally one reader serves every stream worker
 * (stream-reader.ts); each still needs what its own event source mapping gives it in AWS: its
 * filter, its batches, its retries, and a slow or failing batch that holds up no other worker.
 */

export interface StreamSubscriber {
  name: string;
  batchSize: number;
  handler: StreamHandler;
  /** Entity tags to deliver (Lambda's event-source filter); everything when absent. */
  entities?: readonly string[];
  /** Also deliver REMOVE records of these entities (matched on the old image). */
  removals?: readonly string[];
  /** The subscriber's own errors; the reader's go to the reader's `onError`. */
  onError?: (error: unknown) => void;
}

function toLambdaRecord(record: _Record, streamArn: string): DynamoDBRecord {
  const created = record.dynamodb?.ApproximateCreationDateTime;
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion,
    eventSource: 'aws:dynamodb',
    awsRegion: record.awsRegion,
    eventSourceARN: streamArn,
    // The SDK reads the time as a Date; Lambda hands it over as epoch seconds.
    dynamodb: {
      ...record.dynamodb,
      ...(created ? { ApproximateCreationDateTime: Math.floor(created.getTime() / 1000) } : {}),
    } as DynamoDBRecord['dynamodb'],
  };
}

/**
 * One subscriber's view of the stream, as one Lambda event source mapping: its own backlog per
 * shard, batches of up to `batchSize`, `ReportBatchItemFailures` semantics (the batch is retried
 * from the first failed record, up to `maxRetries`, then that record is skipped and reported).
 */
export function subscription(
  subscriber: StreamSubscriber,
  streamArn: string,
  options: {
    maxRetries: number;
    retryDelayMs: number;
    onError: ((error: unknown) => void) | undefined;
    /** After each drain of a shard: the reader may save its position. */
    onSettled: () => void;
    /** The reader was halted: nothing more is handed over. */
    halted: () => boolean;
  },
) {
  const { maxRetries } = options;
  const reportError = subscriber.onError ?? options.onError;
  const onError = (error: unknown) => {
    if (!options.halted()) reportError?.(error);
  };
  const backlogs = new Map<string, _Record[]>();
  const draining = new Map<string, Promise<void>>();
  const attempts = new Map<string, number>();
  const wanted = (record: _Record): boolean =>
    !subscriber.entities ||
    subscriber.entities.includes(record.dynamodb?.NewImage?.entity?.S ?? '') ||
    (record.eventName === 'REMOVE' &&
      (subscriber.removals ?? []).includes(record.dynamodb?.OldImage?.entity?.S ?? ''));

  /** Delivers what is waiting on the shard, in order, until done or a batch fails (kept for later). */
  const drain = async (shardId: string): Promise<void> => {
    const records = backlogs.get(shardId) ?? [];
    let done = 0;
    while (done < records.length && !options.halted()) {
      const batch = records.slice(done, done + subscriber.batchSize);
      let failedAt = -1;
      try {
        const result = await subscriber.handler(
          { Records: batch.map((record) => toLambdaRecord(record, streamArn)) },
          lambdaContext(subscriber.name, 900_000),
        );
        const firstFailure = result?.batchItemFailures[0]?.itemIdentifier;
        failedAt = firstFailure
          ? batch.findIndex((record) => record.dynamodb?.SequenceNumber === firstFailure)
          : -1;
      } catch (error) {
        onError(error);
        failedAt = 0;
      }
      if (failedAt < 0) {
        attempts.delete(shardId);
        done += batch.length;
        continue;
      }
      const tries = (attempts.get(shardId) ?? 0) + 1;
      if (tries <= maxRetries) {
        attempts.set(shardId, tries);
        done += failedAt;
        await sleep(options.retryDelayMs);
        break;
      }
      onError(new Error(`${subscriber.name}: skipping a stream record after ${maxRetries} retries`));
      attempts.delete(shardId);
      done += failedAt + 1;
    }
    // Records read while this drain ran were appended to the same array: keep them too.
    backlogs.set(shardId, (backlogs.get(shardId) ?? records).slice(done));
  };

  return {
    /** Queues the records this subscriber wants; how many that was. */
    add(shardId: string, records: readonly _Record[]): number {
      const mine = records.filter(wanted);
      if (mine.length === 0) return 0;
      const backlog = backlogs.get(shardId) ?? [];
      backlog.push(...mine);
      backlogs.set(shardId, backlog);
      return mine.length;
    },
    /** Starts delivering the shard's backlog unless that is under way: the reader does not wait. */
    kick(shardId: string) {
      if (draining.has(shardId) || (backlogs.get(shardId)?.length ?? 0) === 0) return;
      draining.set(
        shardId,
        drain(shardId).finally(() => {
          draining.delete(shardId);
          options.onSettled();
        }),
      );
    },
    /** The sequence number of the shard's oldest record this subscriber has not finished with. */
    firstPending: (shardId: string): string | undefined =>
      backlogs.get(shardId)?.[0]?.dynamodb?.SequenceNumber,
    settled: () => Promise.all(draining.values()),
  };
}
