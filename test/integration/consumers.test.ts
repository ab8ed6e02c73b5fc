import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { DynamoDBRecord, SQSRecord } from 'aws-lambda';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { streamArnOf } from '../../infra/local/bootstrap';
import type { Consumer } from '../../infra/local/consumers/consumer';
import { startQueueConsumer } from '../../infra/local/consumers/queue-poller';
import { startStreamConsumer } from '../../infra/local/consumers/stream-reader';
import type { YieldToRequests } from '../../infra/local/consumers/yield-to-requests';
import { eventually } from '../helpers/eventually';

/** The local event sources behave like Lambda's: partial batch failures, redrive, stream order. */
const consumers: Consumer[] = [];

afterEach(async () => {
  await Promise.all(consumers.splice(0).map((consumer) => consumer.stop()));
});

describe('the local SQS event source', () => {
  it('deletes what succeeded, redelivers what failed, and dead-letters a poison message', async () => {
    const endpoint = inject('endpoints').sqs ?? '';
    const sqs = new SQSClient({ endpoint, useQueueUrlAsEndpoint: false });
    const name = `consumer-test-${Date.now()}`;
    const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }));
    const dlqArn = (
      await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }))
    ).Attributes?.QueueArn;
    const queue = await sqs.send(
      new CreateQueueCommand({
        QueueName: name,
        Attributes: {
          VisibilityTimeout: '1',
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 2 }),
        },
      }),
    );
    const queueUrl = queue.QueueUrl ?? '';
    const handled: string[] = [];
    const poisonAttempts: SQSRecord[] = [];
    consumers.push(
      startQueueConsumer({
        name: 'test',
        endpoint,
        queueUrl,
        queueArn: 'arn:aws:sqs:local:000000000000:test',
        batchSize: 10,
        handler: async (event) => {
          const failures = event.Records.filter((record) => record.body === 'poison');
          poisonAttempts.push(...failures);
          handled.push(
            ...event.Records.filter((record) => record.body !== 'poison').map((record) => record.body),
          );
          return { batchItemFailures: failures.map((record) => ({ itemIdentifier: record.messageId })) };
        },
      }),
    );
    for (const body of ['a', 'poison', 'b'])
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));

    await eventually(
      () => poisonAttempts.length,
      (count) => count >= 2,
    );
    expect(handled.sort()).toEqual(['a', 'b']);
    expect(poisonAttempts.length).toBe(2);
    const deadLettered = async () => {
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: dlq.QueueUrl,
          AttributeNames: ['ApproximateNumberOfMessages'],
        }),
      );
      return Number(Attributes?.ApproximateNumberOfMessages ?? 0);
    };
    const count = await eventually(deadLettered, (messages) => messages > 0, {
      timeoutMs: 10_000,
      intervalMs: 200,
    });
    expect(count).toBe(1);
    sqs.destroy();
  });
});

describe('holding the local event sources', () => {
  it('takes no message while paused, then everything that piled up once resumed', async () => {
    const endpoint = inject('endpoints').sqs ?? '';
    const sqs = new SQSClient({ endpoint, useQueueUrlAsEndpoint: false });
    const queue = await sqs.send(new CreateQueueCommand({ QueueName: `held-test-${Date.now()}` }));
    const queueUrl = queue.QueueUrl ?? '';
    const handled: string[] = [];
    const consumer = startQueueConsumer({
      name: 'held',
      endpoint,
      queueUrl,
      queueArn: 'arn:aws:sqs:local:000000000000:held',
      batchSize: 10,
      handler: async (event) => {
        handled.push(...event.Records.map((record) => record.body));
        return { batchItemFailures: [] };
      },
    });
    consumers.push(consumer);
    consumer.pause();
    // A long poll already under way when paused may still return: let it end first.
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    for (const body of ['one', 'two', 'three'])
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(handled).toEqual([]);

    consumer.resume();
    await eventually(
      () => handled.length,
      (count) => count === 3,
    );
    expect(handled.sort()).toEqual(['one', 'three', 'two']);
    sqs.destroy();
  });

  it('holds back while the API is busy and polls as soon as it is not; a busy spell that does not end holds it at most maxMs at a time', async () => {
    const endpoint = inject('endpoints').sqs ?? '';
    const sqs = new SQSClient({ endpoint, useQueueUrlAsEndpoint: false });
    const consumerOf = async (name: string, yieldTo: YieldToRequests) => {
      const queue = await sqs.send(new CreateQueueCommand({ QueueName: `${name}-${Date.now()}` }));
      const handled: string[] = [];
      consumers.push(
        startQueueConsumer({
          name,
          endpoint,
          queueUrl: queue.QueueUrl ?? '',
          queueArn: `arn:aws:sqs:local:000000000000:${name}`,
          batchSize: 10,
          handler: async (event) => {
            handled.push(...event.Records.map((record) => record.body));
            return { batchItemFailures: [] };
          },
          yieldTo,
        }),
      );
      return { queueUrl: queue.QueueUrl ?? '', handled };
    };

    let busy = true;
    const yielding = await consumerOf('yielding', { busy: () => busy, maxMs: 60_000 });
    await sqs.send(new SendMessageCommand({ QueueUrl: yielding.queueUrl, MessageBody: 'during a burst' }));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(yielding.handled).toEqual([]);
    busy = false;
    const handledOnceIdle = await eventually(
      () => yielding.handled.length,
      (count) => count === 1,
      { timeoutMs: 3_000, intervalMs: 20 },
    );
    expect(handledOnceIdle).toBe(1);

    const alwaysBusy = await consumerOf('always-busy', { busy: () => true, maxMs: 300 });
    await sqs.send(new SendMessageCommand({ QueueUrl: alwaysBusy.queueUrl, MessageBody: 'under load' }));
    const handledUnderLoad = await eventually(
      () => alwaysBusy.handled.length,
      (count) => count === 1,
      { timeoutMs: 5_000, intervalMs: 20 },
    );
    expect(handledUnderLoad).toBe(1);
    sqs.destroy();
  });
});

describe('the local DynamoDB stream event source', () => {
  it('delivers table writes in order and retries from the first failed record', async () => {
    const endpoint = inject('endpoints').dynamodb ?? '';
    const tableName = inject('tableName');
    const seen: DynamoDBRecord[] = [];
    let failOnce = true;
    consumers.push(
      startStreamConsumer({
        name: 'test',
        endpoint,
        streamArn: await streamArnOf(endpoint, tableName),
        batchSize: 10,
        pollMs: 50,
        handler: async (event) => {
          const mine = event.Records.filter((record) =>
            record.dynamodb?.Keys?.pk?.S?.startsWith('TEST#stream'),
          );
          const second = mine.findIndex((record) => record.dynamodb?.Keys?.sk?.S === '2');
          if (failOnce && second >= 0) {
            failOnce = false;
            seen.push(...mine.slice(0, second));
            return { batchItemFailures: [{ itemIdentifier: mine[second]?.dynamodb?.SequenceNumber ?? '' }] };
          }
          seen.push(...mine);
          return { batchItemFailures: [] };
        },
      }),
    );
    // Let the consumer find the shards before writing (it starts from the newest record).
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const dynamo = new DynamoDBClient({ endpoint });
    for (const sk of ['1', '2', '3']) {
      await dynamo.send(
        new PutItemCommand({ TableName: tableName, Item: { pk: { S: 'TEST#stream' }, sk: { S: sk } } }),
      );
    }
    const records = await eventually(
      () => seen.map((record) => record.dynamodb?.Keys?.sk?.S),
      (keys) => keys.length >= 3,
    );
    expect(records).toEqual(['1', '2', '3']);
    expect(seen.every((record) => record.eventName === 'INSERT')).toBe(true);
    dynamo.destroy();
  });
});

describe('the local DynamoDB stream event source with a saved position', () => {
  const endpoint = () => inject('endpoints').dynamodb ?? '';
  const tableName = () => inject('tableName');
  const folders: string[] = [];
  const positionFile = () => {
    const folder = mkdtempSync(join(tmpdir(), 'stream-position-'));
    folders.push(folder);
    return join(folder, 'stream-position.json');
  };
  afterEach(() => {
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  });
  const put = async (pk: string, sks: string[]) => {
    const dynamo = new DynamoDBClient({ endpoint: endpoint() });
    for (const sk of sks)
      await dynamo.send(
        new PutItemCommand({ TableName: tableName(), Item: { pk: { S: pk }, sk: { S: sk } } }),
      );
    dynamo.destroy();
  };
  const savedSequenceNumbers = (file: string): (string | null)[] =>
    existsSync(file)
      ? Object.values(
          (JSON.parse(readFileSync(file, 'utf8')) as { shards: Record<string, string | null> }).shards,
        )
      : [];
  const keysOf = (records: readonly DynamoDBRecord[], pk: string) =>
    records
      .filter((record) => record.dynamodb?.Keys?.pk?.S === pk)
      .map((record) => record.dynamodb?.Keys?.sk?.S);

  it('resumes after the last record every subscriber finished: not from the newest, not skipping a failing one', async () => {
    const file = positionFile();
    const pk = `TEST#resume-${crypto.randomUUID()}`;
    const streamArn = await streamArnOf(endpoint(), tableName());
    const before: string[] = [];
    let handledFirst: string | undefined;
    const first = startStreamConsumer({
      name: 'before the crash',
      endpoint: endpoint(),
      streamArn,
      positionFile: file,
      batchSize: 10,
      pollMs: 50,
      maxRetries: 1_000,
      // Takes '1', fails on '2' every time.
      handler: async (event) => {
        const mine = event.Records.filter((record) => record.dynamodb?.Keys?.pk?.S === pk);
        const failing = mine.find((record) => record.dynamodb?.Keys?.sk?.S === '2');
        for (const record of mine.slice(0, failing ? mine.indexOf(failing) : mine.length)) {
          before.push(record.dynamodb?.Keys?.sk?.S ?? '');
          if (record.dynamodb?.Keys?.sk?.S === '1') handledFirst = record.dynamodb.SequenceNumber;
        }
        return {
          batchItemFailures: failing ? [{ itemIdentifier: failing.dynamodb?.SequenceNumber ?? '' }] : [],
        };
      },
    });
    consumers.push(first);
    // The start (the newest record) is saved at once: a crash before any batch still resumes there.
    await eventually(() => existsSync(file), Boolean);
    await put(pk, ['1', '2', '3']);
    // '1' is saved as handled; '2' keeps failing, so the position stays there.
    await eventually(
      () => savedSequenceNumbers(file),
      (saved) => handledFirst !== undefined && saved.includes(handledFirst),
    );
    first.halt();
    await put(pk, ['4']);

    const after: DynamoDBRecord[] = [];
    consumers.push(
      startStreamConsumer({
        name: 'after the restart',
        endpoint: endpoint(),
        streamArn,
        positionFile: file,
        batchSize: 10,
        pollMs: 50,
        handler: async (event) => {
          after.push(...event.Records);
          return { batchItemFailures: [] };
        },
      }),
    );
    const keys = await eventually(
      () => keysOf(after, pk),
      (found) => found.length >= 3,
    );
    expect(before).toEqual(['1']);
    expect(keys).toEqual(['2', '3', '4']);
  });

  it.each([
    [
      'names another stream (the table was made anew)',
      (streamArn: string) => ({ streamArn: `${streamArn}-gone`, shards: {} }),
    ],
    [
      'names none of the shards (they are gone)',
      (streamArn: string) => ({
        streamArn,
        shards: { 'shardId-00000000000000000000-gone': '000000000000000000001' },
      }),
    ],
    ['is not a position', () => 'not json'],
  ])('reads from the oldest record kept when the saved position %s', async (_, saved) => {
    const file = positionFile();
    const pk = `TEST#resume-${crypto.randomUUID()}`;
    const streamArn = await streamArnOf(endpoint(), tableName());
    writeFileSync(file, JSON.stringify(saved(streamArn)));
    await put(pk, ['before the start']);
    const seen: DynamoDBRecord[] = [];
    consumers.push(
      startStreamConsumer({
        name: 'from the oldest',
        endpoint: endpoint(),
        streamArn,
        positionFile: file,
        batchSize: 100,
        pollMs: 50,
        handler: async (event) => {
          seen.push(...event.Records);
          return { batchItemFailures: [] };
        },
        onError: () => undefined,
      }),
    );
    expect(
      await eventually(
        () => keysOf(seen, pk),
        (found) => found.length > 0,
      ),
    ).toEqual(['before the start']);
    // And the position is the stream's own from then on.
    await eventually(
      () => readFileSync(file, 'utf8'),
      (text) => text.includes(`"streamArn": "${streamArn}"`),
    );
  });
});
