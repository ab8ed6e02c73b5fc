import {
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { InvokeCommand, type InvokeCommandOutput, LambdaClient } from '@aws-sdk/client-lambda';
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { redriveStreamFailures, type StreamFailure } from '../../infra/ops/redrive-stream-failures';

const sqs = mockClient(SQSClient);
const streams = mockClient(DynamoDBStreamsClient);
const lambda = mockClient(LambdaClient);
const clients = {
  sqs: new SQSClient({}),
  streams: new DynamoDBStreamsClient({}),
  lambda: new LambdaClient({}),
};

const queueUrl = 'https://sqs.eu-west-1.amazonaws.com/123456789012/WebhookFanoutStreamFailures';
const functionArn = 'arn:aws:lambda:eu-west-1:123456789012:function:WebhookFanoutWorker';
const streamArn = 'arn:aws:dynamodb:eu-west-1:123456789012:table/t/stream/2026-11-24T00:00:00.000';
// Sequence numbers are longer than a double can hold exactly.
const seq = (n: number) => `4900000000000000000000${String(n).padStart(4, '0')}`;

const failure = (start: number, end: number): StreamFailure => ({
  requestContext: { functionArn, condition: 'RetryAttemptsExhausted', approximateInvokeCount: 11 },
  DDBStreamBatchInfo: {
    shardId: 'shardId-1',
    startSequenceNumber: seq(start),
    endSequenceNumber: seq(end),
    streamArn,
    batchSize: end - start + 1,
    approximateArrivalOfFirstRecord: '2026-11-24T08:00:00Z',
  },
});
const record = (n: number) => ({
  eventName: 'INSERT' as const,
  dynamodb: {
    SequenceNumber: seq(n),
    ApproximateCreationDateTime: new Date(1_700_000_000_000),
    Keys: { pk: { S: 'ORG#1' }, sk: { S: `EVT#${n}` } },
  },
});
const message = (body: unknown, id = 'm1') => ({
  MessageId: id,
  ReceiptHandle: `handle-${id}`,
  Body: JSON.stringify(body),
});
const options = { queueUrl, max: 10, dryRun: false };
/** Lambda's answer body (the SDK wraps it in a blob adapter; the code under test reads the bytes). */
const payload = (text: string) => Buffer.from(text) as unknown as InvokeCommandOutput['Payload'];
const invokedEvent = () =>
  JSON.parse(
    Buffer.from(lambda.commandCalls(InvokeCommand)[0]?.args[0].input.Payload as Uint8Array).toString(),
  ) as {
    Records: {
      dynamodb: { SequenceNumber: string; ApproximateCreationDateTime: number };
      eventSourceARN: string;
    }[];
  };

describe('redrive of stream failures', () => {
  beforeEach(() => {
    sqs.reset();
    streams.reset();
    lambda.reset();
    streams.on(GetShardIteratorCommand).resolves({ ShardIterator: 'it-1' });
  });

  it('invokes the named function with the batch’s records read back from the stream, then deletes the message', async () => {
    // Prepare: the range 3..5, served over two pages, followed by a record past the range.
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [message(failure(3, 5))] })
      .resolves({ Messages: [] });
    streams
      .on(GetRecordsCommand, { ShardIterator: 'it-1' })
      .resolves({ Records: [record(3), record(4)], NextShardIterator: 'it-2' })
      .on(GetRecordsCommand, { ShardIterator: 'it-2' })
      .resolves({ Records: [record(5), record(6)], NextShardIterator: 'it-3' });
    lambda.on(InvokeCommand).resolves({ Payload: payload('{"batchItemFailures":[]}') });

    // Act
    const outcomes = await redriveStreamFailures(options, clients);

    // Assess
    expect(outcomes).toEqual([{ messageId: 'm1', result: 'redriven', records: 3, functionArn }]);
    expect(streams.commandCalls(GetShardIteratorCommand)[0]?.args[0].input).toEqual({
      StreamArn: streamArn,
      ShardId: 'shardId-1',
      ShardIteratorType: 'AT_SEQUENCE_NUMBER',
      SequenceNumber: seq(3),
    });
    expect(streams.commandCalls(GetRecordsCommand)).toHaveLength(2);
    const invoke = lambda.commandCalls(InvokeCommand)[0]?.args[0].input;
    expect(invoke).toMatchObject({ FunctionName: functionArn, InvocationType: 'RequestResponse' });
    const event = invokedEvent();
    expect(event.Records.map((r) => r.dynamodb.SequenceNumber)).toEqual([seq(3), seq(4), seq(5)]);
    expect(event.Records[0]).toMatchObject({
      eventSourceARN: streamArn,
      dynamodb: { ApproximateCreationDateTime: 1_700_000_000 },
    });
    expect(sqs.commandCalls(DeleteMessageCommand)[0]?.args[0].input).toEqual({
      QueueUrl: queueUrl,
      ReceiptHandle: 'handle-m1',
    });
  });

  it('keeps the message when the function fails or reports a failed record', async () => {
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [message(failure(1, 1), 'a'), message(failure(1, 1), 'b')] })
      .resolves({ Messages: [] });
    streams.on(GetRecordsCommand).resolves({ Records: [record(1)] });
    lambda
      .on(InvokeCommand)
      .resolvesOnce({ FunctionError: 'Unhandled', Payload: payload('{"errorMessage":"boom"}') })
      .resolves({ Payload: payload(`{"batchItemFailures":[{"itemIdentifier":"${seq(1)}"}]}`) });

    const outcomes = await redriveStreamFailures(options, clients);

    expect(outcomes.map((o) => (o.result === 'kept' ? o.reason : o.result))).toEqual([
      expect.stringMatching(/function failed \(Unhandled\).*boom/),
      expect.stringMatching(/reported failures/),
    ]);
    expect(sqs.commandCalls(DeleteMessageCommand)).toHaveLength(0);
  });

  it('keeps the message when its records have left the stream', async () => {
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [message(failure(1, 2))] })
      .resolves({ Messages: [] });
    streams
      .on(GetShardIteratorCommand)
      .rejects(Object.assign(new Error('trimmed'), { name: 'TrimmedDataAccessException' }));

    const [outcome] = await redriveStreamFailures(options, clients);

    expect(outcome).toMatchObject({
      result: 'kept',
      reason: expect.stringMatching(/no longer in the stream/),
    });
    expect(lambda.commandCalls(InvokeCommand)).toHaveLength(0);
  });

  it('only says what it would do in a dry run, and leaves other messages alone', async () => {
    sqs
      .on(ReceiveMessageCommand)
      .resolves({ Messages: [message(failure(1, 1)), message({ hello: 1 }, 'x')] });
    streams.on(GetRecordsCommand).resolves({ Records: [record(1)] });

    const outcomes = await redriveStreamFailures({ ...options, dryRun: true }, clients);

    expect(outcomes).toEqual([
      { messageId: 'm1', result: 'would redrive', records: 1, functionArn },
      { messageId: 'x', result: 'kept', reason: 'not a stream on-failure message' },
    ]);
    expect(sqs.commandCalls(ReceiveMessageCommand)[0]?.args[0].input.VisibilityTimeout).toBe(0);
    expect(lambda.commandCalls(InvokeCommand)).toHaveLength(0);
    expect(sqs.commandCalls(DeleteMessageCommand)).toHaveLength(0);
  });
});
