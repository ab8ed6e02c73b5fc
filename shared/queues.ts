import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { queueDefinitions } from './resources';

type QueueName = (typeof queueDefinitions)[number]['name'];

/**
 * One SQS client per container. With an endpoint override (the local emulator) the queue URLs name
 * a host that does not resolve, so requests go to the endpoint instead of the URL's host.
 */
const sqs = new SQSClient({ useQueueUrlAsEndpoint: !process.env.AWS_ENDPOINT_URL_SQS });

function urlOf(queue: QueueName): string {
  const definition = queueDefinitions.find((candidate) => candidate.name === queue);
  const url = definition ? process.env[definition.envVar] : undefined;
  if (!url) throw new Error(`Queue ${queue} is not configured (${definition?.envVar ?? 'unknown'})`);
  return url;
}

export const queues = {
  async send(queue: QueueName, body: unknown, delaySeconds = 0): Promise<void> {
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: urlOf(queue),
        MessageBody: JSON.stringify(body),
        DelaySeconds: delaySeconds,
      }),
    );
  },

  /** Sends up to 10 bodies; returns the indexes SQS did not accept. */
  async sendBatch(queue: QueueName, bodies: readonly unknown[]): Promise<number[]> {
    if (bodies.length === 0) return [];
    const { Failed = [] } = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: urlOf(queue),
        Entries: bodies.map((body, i) => ({ Id: String(i), MessageBody: JSON.stringify(body) })),
      }),
    );
    return Failed.map((failure) => Number(failure.Id));
  },
};
