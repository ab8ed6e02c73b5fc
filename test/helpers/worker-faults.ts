import { marshall } from '@aws-sdk/util-dynamodb';
import type { Context, DynamoDBRecord, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { expect, vi } from 'vitest';
import { lambdaContext } from '../../infra/local/lambda-event';

/** An SQS record of `queue` carrying `body` as its job, as Lambda hands it to a queue worker. */
export function sqsRecord(queue: string, body: unknown): SQSRecord {
  return {
    messageId: crypto.randomUUID(),
    receiptHandle: 'test',
    body: JSON.stringify(body),
    attributes: {} as SQSRecord['attributes'],
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:local:000000000000:${queue}`,
    awsRegion: 'us-east-1',
  };
}

type StreamImage = NonNullable<NonNullable<DynamoDBRecord['dynamodb']>['NewImage']>;

/**
 * A table stream record of `item` as Lambda hands it to a stream worker: its keys, its new image
 * (the old one for a REMOVE), committed `ageMs` ago, with sequence number `sequenceNumber`.
 */
export function streamRecord(
  sequenceNumber: string,
  item: Record<string, unknown>,
  { eventName = 'INSERT', ageMs = 1_000 }: { eventName?: DynamoDBRecord['eventName']; ageMs?: number } = {},
): DynamoDBRecord {
  const image = marshall(item, { removeUndefinedValues: true }) as unknown as StreamImage;
  return {
    eventID: sequenceNumber,
    eventName,
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    dynamodb: {
      Keys: { pk: image.pk as StreamImage[string], sk: image.sk as StreamImage[string] },
      SequenceNumber: sequenceNumber,
      ApproximateCreationDateTime: (Date.now() - ageMs) / 1000,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
      ...(eventName === 'REMOVE' ? { OldImage: image } : { NewImage: image }),
    },
  };
}

/**
 * A crash in the middle of a worker's job: the `nth` command of `kind` that `client` sends fails
 * (as if the instance died there); every other command goes through. Restore the spy afterwards.
 */
export function crashOnNth(
  client: { send: (...args: never[]) => unknown },
  kind: abstract new (...args: never[]) => unknown,
  nth: number,
) {
  const original = client.send.bind(client) as (command: unknown) => Promise<unknown>;
  let seen = 0;
  return vi.spyOn(client, 'send').mockImplementation(((command: unknown) => {
    if (command instanceof kind && ++seen === nth) return Promise.reject(new Error('crash'));
    return original(command);
  }) as never);
}

/**
 * A resumable job as SQS would carry it through a queue worker that has no time left (one step per
 * invocation): a failed invocation is redelivered as it was; a step that hands the job back (the
 * bodies a spy on `queues.send` pushes into `handedOver`) runs next from there; the run ends at a
 * step that hands nothing back. Returns how many invocations failed.
 */
export async function runHurried(options: {
  handler: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;
  queue: string;
  functionName: string;
  job: unknown;
  handedOver: readonly unknown[];
  maxSteps: number;
}): Promise<{ failures: number }> {
  const hurried = { ...lambdaContext(options.functionName), getRemainingTimeInMillis: () => 0 };
  let job = options.job;
  let failures = 0;
  for (let steps = 0; ; steps++) {
    expect(steps).toBeLessThan(options.maxSteps);
    const seen = options.handedOver.length;
    const result = await options.handler({ Records: [sqsRecord(options.queue, job)] }, hurried);
    if (result.batchItemFailures.length) failures++;
    else if (options.handedOver.length > seen) job = options.handedOver.at(-1);
    else return { failures };
  }
}
