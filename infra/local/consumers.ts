import {
  type _Record,
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type {
  Context,
  DynamoDBBatchResponse,
  DynamoDBRecord,
  DynamoDBStreamEvent,
  SQSBatchResponse,
  SQSEvent,
} from 'aws-lambda';
import { lambdaContext } from './lambda-event';

export type QueueHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | undefined>;
export type StreamHandler = (
  event: DynamoDBStreamEvent,
  context: Context,
) => Promise<DynamoDBBatchResponse | undefined>;

export interface Consumer {
  stop(): Promise<void>;
  /** Stops taking new work until `resume` (what is in hand finishes): holds a backlog back. */
  pause(): void;
  resume(): void;
}

/** Pause/resume for a polling loop: `open()` resolves at once unless paused. */
function gate() {
  let paused = false;
  return {
    pause: () => {
      paused = true;
    },
    resume: () => {
      paused = false;
    },
    async open(running: () => boolean): Promise<void> {
      while (paused && running()) await sleep(10);
    },
  };
}

/** GetRecords returns at most this many records per call. */
const READ_LIMIT = 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls a queue the way Lambda's SQS event source does: batches of up to `batchSize`, partial
 * batch failures reported by message id, successes deleted, failures left to reappear after the
 * visibility timeout (and to move to the dead-letter queue by the queue's redrive policy). A handler
 * that throws fails the whole batch.
 */
export function startQueueConsumer(options: {
  name: string;
  endpoint: string;
  queueUrl: string;
  queueArn: string;
  batchSize: number;
  handler: QueueHandler;
  onError?: (error: unknown) => void;
}): Consumer {
  const sqs = new SQSClient({ endpoint: options.endpoint, useQueueUrlAsEndpoint: false });
  const held = gate();
  let running = true;
  const loop = (async () => {
    while (running) {
      await held.open(() => running);
      try {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: options.queueUrl,
            MaxNumberOfMessages: Math.min(10, options.batchSize),
            WaitTimeSeconds: 1,
            MessageSystemAttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
        );
        if (Messages.length === 0 || !running) continue;
        const event: SQSEvent = {
          Records: Messages.map((message) => ({
            messageId: message.MessageId ?? '',
            receiptHandle: message.ReceiptHandle ?? '',
            body: message.Body ?? '',
            attributes: (message.Attributes ?? {}) as SQSEvent['Records'][number]['attributes'],
            messageAttributes: {},
            md5OfBody: message.MD5OfBody ?? '',
            eventSource: 'aws:sqs',
            eventSourceARN: options.queueArn,
            awsRegion: process.env.AWS_REGION ?? 'us-east-1',
          })),
        };
        let failed = new Set(Messages.map((message) => message.MessageId));
        try {
          const result = await options.handler(event, lambdaContext(options.name, 900_000));
          failed = new Set((result?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
        } catch (error) {
          options.onError?.(error);
        }
        const done = Messages.filter((message) => !failed.has(message.MessageId));
        if (done.length > 0) {
          await sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: options.queueUrl,
              Entries: done.map((message, i) => ({ Id: String(i), ReceiptHandle: message.ReceiptHandle })),
            }),
          );
        }
      } catch (error) {
        options.onError?.(error);
        await sleep(500);
      }
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      sqs.destroy();
    },
    pause: held.pause,
    resume: held.resume,
  };
}

function toLambdaRecord(record: _Record, streamArn: string): DynamoDBRecord {
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion,
    eventSource: 'aws:dynamodb',
    awsRegion: record.awsRegion,
    eventSourceARN: streamArn,
    dynamodb: record.dynamodb as DynamoDBRecord['dynamodb'],
  };
}

export interface StreamSubscriber {
  name: string;
  batchSize: number;
  handler: StreamHandler;
  /** Entity tags to deliver (Lambda's event-source filter); everything when absent. */
  entities?: readonly string[];
  /** The subscriber's own errors; the reader's go to the reader's `onError`. */
  onError?: (error: unknown) => void;
}

/**
 * One subscriber's view of the stream, as one Lambda event source mapping: its own backlog per
 * shard, batches of up to `batchSize`, `ReportBatchItemFailures` semantics (the batch is retried
 * from the first failed record, up to `maxRetries`, then that record is skipped and reported).
 */
function subscription(
  subscriber: StreamSubscriber,
  streamArn: string,
  options: { maxRetries: number; retryDelayMs: number; onError: ((error: unknown) => void) | undefined },
) {
  const { maxRetries } = options;
  const onError = subscriber.onError ?? options.onError;
  const backlogs = new Map<string, _Record[]>();
  const draining = new Map<string, Promise<void>>();
  const attempts = new Map<string, number>();
  const wanted = (record: _Record): boolean =>
    !subscriber.entities || subscriber.entities.includes(record.dynamodb?.NewImage?.entity?.S ?? '');

  /** Delivers what is waiting on the shard, in order, until done or a batch fails (kept for later). */
  const drain = async (shardId: string): Promise<void> => {
    const records = backlogs.get(shardId) ?? [];
    let done = 0;
    while (done < records.length) {
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
        onError?.(error);
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
      onError?.(new Error(`${subscriber.name}: skipping a stream record after ${maxRetries} retries`));
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
        drain(shardId).finally(() => draining.delete(shardId)),
      );
    },
    settled: () => Promise.all(draining.values()),
  };
}

/**
 * Reads the table's stream the way Lambda's DynamoDB event sources do, one reader for all of them
 * (each AWS event source mapping reads on its own; locally one read serves every subscriber, which
 * keeps DynamoDB Local's work per record constant however many workers there are). Every shard in
 * order; each subscriber gets its records in order, with its own batches and failure handling.
 */
export function startStreamConsumers(options: {
  endpoint: string;
  streamArn: string;
  subscribers: readonly StreamSubscriber[];
  maxRetries?: number;
  pollMs?: number;
  onError?: (error: unknown) => void;
}): Consumer {
  const streams = new DynamoDBStreamsClient({ endpoint: options.endpoint });
  const subscriptions = options.subscribers.map((subscriber) =>
    subscription(subscriber, options.streamArn, {
      maxRetries: options.maxRetries ?? 3,
      retryDelayMs: options.pollMs ?? 200,
      onError: options.onError,
    }),
  );
  const iterators = new Map<string, string | undefined>();
  const held = gate();
  let running = true;

  const discoverShards = async (startAt: 'LATEST' | 'TRIM_HORIZON') => {
    const { StreamDescription } = await streams.send(
      new DescribeStreamCommand({ StreamArn: options.streamArn }),
    );
    for (const shard of StreamDescription?.Shards ?? []) {
      if (!shard.ShardId || iterators.has(shard.ShardId)) continue;
      const { ShardIterator } = await streams.send(
        new GetShardIteratorCommand({
          StreamArn: options.streamArn,
          ShardId: shard.ShardId,
          ShardIteratorType: startAt,
        }),
      );
      iterators.set(shard.ShardId, ShardIterator);
    }
  };

  const loop = (async () => {
    let discoveredAt = 0;
    let first = true;
    while (running) {
      await held.open(() => running);
      let busy = false;
      try {
        if (Date.now() - discoveredAt > 1_000) {
          // Shards present at start are read from their newest record; later ones from the beginning.
          await discoverShards(first ? 'LATEST' : 'TRIM_HORIZON');
          first = false;
          discoveredAt = Date.now();
        }
        for (const [shardId, iterator] of iterators) {
          // Each subscriber works through its own backlog: a slow or retrying one holds up no other.
          if (iterator) {
            const result = await streams.send(
              new GetRecordsCommand({ ShardIterator: iterator, Limit: READ_LIMIT }),
            );
            iterators.set(shardId, result.NextShardIterator);
            const records = result.Records ?? [];
            let wanted = 0;
            for (const subscribed of subscriptions) wanted += subscribed.add(shardId, records);
            // More is likely waiting after a full read or one with work in it: read again at once.
            // A read of nothing but records no worker wants (e.g. delivery records) waits like an empty one.
            if (records.length === READ_LIMIT || wanted > 0) busy = true;
          }
          for (const subscribed of subscriptions) subscribed.kick(shardId);
        }
      } catch (error) {
        busy = false;
        options.onError?.(error);
      }
      // A poll that returned records is followed at once (more may be waiting), as Lambda does.
      if (!busy) await sleep(options.pollMs ?? 200);
    }
  })();

  return {
    stop: async () => {
      running = false;
      await loop;
      await Promise.all(subscriptions.map((subscribed) => subscribed.settled()));
      streams.destroy();
    },
    pause: held.pause,
    resume: held.resume,
  };
}

/** One subscriber on its own reader (tests). */
export function startStreamConsumer(
  options: StreamSubscriber & {
    endpoint: string;
    streamArn: string;
    maxRetries?: number;
    pollMs?: number;
  },
): Consumer {
  const { endpoint, streamArn, maxRetries, pollMs, ...subscriber } = options;
  return startStreamConsumers({
    endpoint,
    streamArn,
    subscribers: [subscriber],
    ...(maxRetries === undefined ? {} : { maxRetries }),
    ...(pollMs === undefined ? {} : { pollMs }),
    ...(subscriber.onError ? { onError: subscriber.onError } : {}),
  });
}
