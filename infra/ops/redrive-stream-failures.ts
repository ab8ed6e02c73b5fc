import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';

/**
 * `npm run ops:redrive-stream -- --queue-url <url> [--max 10] [--dry-run]`: redrives the on-failure
 * queue of a DynamoDB stream trigger (docs/operations.md, "Redrive stream failures").
 *
 * Lambda sends such a queue a description of the batch it gave up on — shard, first and last
 * sequence numbers, the function — not the records. For each message this reads the records back
 * from the stream (kept 24 h), invokes the function named in the message with them, as its event
 * source would (RequestResponse), and deletes the message only when the function neither failed
 * nor reported a batch item failure. Anything else leaves the message where it is, and says why.
 */

/** The body Lambda writes to a stream trigger's on-failure destination. */
export interface StreamFailure {
  requestContext: { functionArn: string; condition: string; approximateInvokeCount?: number };
  DDBStreamBatchInfo: {
    shardId: string;
    startSequenceNumber: string;
    endSequenceNumber: string;
    streamArn: string;
    batchSize: number;
    approximateArrivalOfFirstRecord?: string;
    approximateArrivalOfLastRecord?: string;
  };
}

export interface RedriveOptions {
  queueUrl: string;
  /** Messages to handle at most. */
  max: number;
  dryRun: boolean;
}

export interface RedriveClients {
  sqs: SQSClient;
  streams: DynamoDBStreamsClient;
  lambda: LambdaClient;
}

export type Outcome =
  | { messageId: string; result: 'redriven' | 'would redrive'; records: number; functionArn: string }
  | { messageId: string; result: 'kept'; reason: string };

/** GetRecords pages read per failure at most (a batch is at most a few thousand records). */
const MAX_PAGES = 50;

const atMost = (sequence: string, end: string): boolean => BigInt(sequence) <= BigInt(end);

/** The batch's records, as Lambda's event source would hand them to the function. */
export async function recordsOf(
  streams: DynamoDBStreamsClient,
  batch: StreamFailure['DDBStreamBatchInfo'],
): Promise<Record<string, unknown>[]> {
  let ShardIterator: string | undefined;
  try {
    ({ ShardIterator } = await streams.send(
      new GetShardIteratorCommand({
        StreamArn: batch.streamArn,
        ShardId: batch.shardId,
        ShardIteratorType: 'AT_SEQUENCE_NUMBER',
        SequenceNumber: batch.startSequenceNumber,
      }),
    ));
  } catch (error) {
    // Past the stream's 24 h: the records (or the whole shard) are gone.
    const name = (error as { name?: string }).name;
    if (name === 'TrimmedDataAccessException' || name === 'ResourceNotFoundException') return [];
    throw error;
  }
  const records: StreamRecord[] = [];
  let iterator = ShardIterator;
  // Pages until the batch's last record (an open shard may answer empty pages on the way).
  for (let page = 0, done = false; iterator && !done && page < MAX_PAGES; page += 1) {
    const answer = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
    for (const record of answer.Records ?? []) {
      const sequence = record.dynamodb?.SequenceNumber ?? '0';
      if (!atMost(sequence, batch.endSequenceNumber)) {
        done = true;
        break;
      }
      records.push(record);
      if (sequence === batch.endSequenceNumber) done = true;
    }
    iterator = answer.NextShardIterator;
  }
  return records.map((record) => ({
    ...record,
    eventSourceARN: batch.streamArn,
    // Lambda's events carry epoch seconds where the SDK gives a Date.
    dynamodb: {
      ...record.dynamodb,
      ...(record.dynamodb?.ApproximateCreationDateTime && {
        ApproximateCreationDateTime: record.dynamodb.ApproximateCreationDateTime.getTime() / 1000,
      }),
    },
  }));
}

/** Why an invocation did not settle the batch, or undefined when it did. */
function failureOf(payload: Uint8Array | undefined, functionError: string | undefined): string | undefined {
  const text = payload ? Buffer.from(payload).toString('utf8') : '';
  if (functionError) return `the function failed (${functionError}): ${text.slice(0, 500)}`;
  try {
    const answer = JSON.parse(text || '{}') as { batchItemFailures?: unknown[] };
    if (answer.batchItemFailures?.length) return `the function reported failures: ${text.slice(0, 500)}`;
  } catch {
    return `the function answered something else than a batch response: ${text.slice(0, 200)}`;
  }
  return undefined;
}

export async function redriveStreamFailures(
  { queueUrl, max, dryRun }: RedriveOptions,
  { sqs, streams, lambda }: RedriveClients,
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  while (outcomes.length < max) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: Math.min(10, max - outcomes.length),
        // Long enough to read the records and invoke; a dry run hands the messages back at once.
        VisibilityTimeout: dryRun ? 0 : 900,
        WaitTimeSeconds: 1,
      }),
    );
    if (Messages.length === 0) break;
    for (const message of Messages) {
      const messageId = message.MessageId ?? '?';
      let failure: StreamFailure;
      try {
        failure = JSON.parse(message.Body ?? '') as StreamFailure;
        if (!failure.DDBStreamBatchInfo?.shardId || !failure.requestContext?.functionArn) throw new Error();
      } catch {
        outcomes.push({ messageId, result: 'kept', reason: 'not a stream on-failure message' });
        continue;
      }
      const records = await recordsOf(streams, failure.DDBStreamBatchInfo);
      if (records.length === 0) {
        outcomes.push({
          messageId,
          result: 'kept',
          reason: `its records are no longer in the stream (arrived ${failure.DDBStreamBatchInfo.approximateArrivalOfFirstRecord ?? '?'}): see the runbook's fallback`,
        });
        continue;
      }
      const functionArn = failure.requestContext.functionArn;
      if (dryRun) {
        outcomes.push({ messageId, result: 'would redrive', records: records.length, functionArn });
        continue;
      }
      const answer = await lambda.send(
        new InvokeCommand({
          FunctionName: functionArn,
          InvocationType: 'RequestResponse',
          Payload: Buffer.from(JSON.stringify({ Records: records })),
        }),
      );
      const reason = failureOf(answer.Payload, answer.FunctionError);
      if (reason) {
        outcomes.push({ messageId, result: 'kept', reason });
        continue;
      }
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
      outcomes.push({ messageId, result: 'redriven', records: records.length, functionArn });
    }
    if (dryRun) break;
  }
  return outcomes;
}

function parseArguments(args: readonly string[]): RedriveOptions | undefined {
  const value = (name: string) => {
    const at = args.indexOf(name);
    return at >= 0 ? args[at + 1] : undefined;
  };
  const queueUrl = value('--queue-url');
  if (!queueUrl || args.includes('--help') || args.includes('-h')) return undefined;
  const max = Number(value('--max') ?? 10);
  if (!Number.isInteger(max) || max < 1) throw new Error('--max takes a positive whole number');
  return { queueUrl, max, dryRun: args.includes('--dry-run') };
}

async function main(): Promise<void> {
  const options = parseArguments(process.argv.slice(2));
  if (!options) {
    console.log(`npm run ops:redrive-stream -- --queue-url <stream failure queue url> [--max 10] [--dry-run]

Reads each on-failure message of a DynamoDB stream trigger (stream-router, search-index), reads its records back from the stream (24 h retention), invokes the
function the message names with them, and deletes the message when the function settled them.
Uses your AWS credentials and region. See docs/operations.md.`);
    return;
  }
  const clients = {
    sqs: new SQSClient({}),
    streams: new DynamoDBStreamsClient({}),
    lambda: new LambdaClient({}),
  };
  const outcomes = await redriveStreamFailures(options, clients);
  for (const outcome of outcomes) {
    console.log(
      outcome.result === 'kept'
        ? `${outcome.messageId}: kept, ${outcome.reason}`
        : `${outcome.messageId}: ${outcome.result}, ${outcome.records} records → ${outcome.functionArn}`,
    );
  }
  const kept = outcomes.filter((outcome) => outcome.result === 'kept').length;
  console.log(
    `${outcomes.length - kept} handled, ${kept} kept${outcomes.length === 0 ? ' (the queue is empty)' : ''}`,
  );
  if (kept > 0) process.exitCode = 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(`ops:redrive-stream: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
