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
}

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
  let running = true;
  const loop = (async () => {
    while (running) {
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

/**
 * Reads the table's stream the way Lambda's DynamoDB event source does: every shard in order,
 * batches of up to `batchSize`, and with `ReportBatchItemFailures` semantics: the batch is retried
 * from the first failed record (up to `maxRetries`, then the record is skipped and reported).
 */
export function startStreamConsumer(options: {
  name: string;
  endpoint: string;
  streamArn: string;
  batchSize: number;
  handler: StreamHandler;
  /** Entity tags to deliver (Lambda's event-source filter); everything when absent. */
  entities?: readonly string[];
  maxRetries?: number;
  pollMs?: number;
  onError?: (error: unknown) => void;
}): Consumer {
  const streams = new DynamoDBStreamsClient({ endpoint: options.endpoint });
  const maxRetries = options.maxRetries ?? 3;
  const iterators = new Map<string, string | undefined>();
  const pending = new Map<string, _Record[]>();
  const attempts = new Map<string, number>();
  let running = true;

  const wanted = (record: _Record): boolean =>
    !options.entities || options.entities.includes(record.dynamodb?.NewImage?.entity?.S ?? '');

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

  const deliver = async (shardId: string, records: _Record[]): Promise<_Record[]> => {
    for (let start = 0; start < records.length; start += options.batchSize) {
      const batch = records.slice(start, start + options.batchSize);
      let failedAt = -1;
      try {
        const result = await options.handler(
          { Records: batch.map((record) => toLambdaRecord(record, options.streamArn)) },
          lambdaContext(options.name, 900_000),
        );
        const firstFailure = result?.batchItemFailures[0]?.itemIdentifier;
        failedAt = firstFailure
          ? batch.findIndex((record) => record.dynamodb?.SequenceNumber === firstFailure)
          : -1;
      } catch (error) {
        options.onError?.(error);
        failedAt = 0;
      }
      if (failedAt >= 0) {
        const tries = (attempts.get(shardId) ?? 0) + 1;
        if (tries <= maxRetries) {
          attempts.set(shardId, tries);
          return records.slice(start + failedAt);
        }
        options.onError?.(new Error(`${options.name}: skipping a stream record after ${maxRetries} retries`));
        attempts.delete(shardId);
        return records.slice(start + failedAt + 1);
      }
      attempts.delete(shardId);
    }
    return [];
  };

  const loop = (async () => {
    let discoveredAt = 0;
    let first = true;
    while (running) {
      try {
        if (Date.now() - discoveredAt > 1_000) {
          // Shards present at start are read from their newest record; later ones from the beginning.
          await discoverShards(first ? 'LATEST' : 'TRIM_HORIZON');
          first = false;
          discoveredAt = Date.now();
        }
        for (const [shardId, iterator] of iterators) {
          let backlog = pending.get(shardId) ?? [];
          if (backlog.length === 0 && iterator) {
            const result = await streams.send(
              new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }),
            );
            iterators.set(shardId, result.NextShardIterator);
            backlog = (result.Records ?? []).filter(wanted);
          }
          if (backlog.length > 0) pending.set(shardId, await deliver(shardId, backlog));
        }
      } catch (error) {
        options.onError?.(error);
      }
      await sleep(options.pollMs ?? 200);
    }
  })();

  return {
    stop: async () => {
      running = false;
      await loop;
      streams.destroy();
    },
  };
}
