import type { SQSRecord } from 'aws-lambda';
import { vi } from 'vitest';

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
