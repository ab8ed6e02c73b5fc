import type { QueueJob, QueueName } from './queue-jobs';
import { queueDefinitions } from './resources';
import { traced } from './tracing';

/**
 * One SQS client per container, loaded on first use: most requests of the functions that can queue
 * work never do, and the client would otherwise lengthen every cold start. With an endpoint override
 * (the local emulator) the queue URLs name a host that does not resolve, so requests go to the
 * endpoint instead of the URL's host.
 */
let loaded:
  | Promise<{ client: import('@aws-sdk/client-sqs').SQSClient; sdk: typeof import('@aws-sdk/client-sqs') }>
  | undefined;
const sqs = () => {
  loaded ??= import('@aws-sdk/client-sqs').then((sdk) => ({
    sdk,
    client: traced(new sdk.SQSClient({ useQueueUrlAsEndpoint: !process.env.AWS_ENDPOINT_URL_SQS })),
  }));
  return loaded;
};

function urlOf(queue: QueueName): string {
  const definition = queueDefinitions.find((candidate) => candidate.name === queue);
  const url = definition ? process.env[definition.envVar] : undefined;
  if (!url) throw new Error(`Queue ${queue} is not configured (${definition?.envVar ?? 'unknown'})`);
  return url;
}

export const queues = {
  async send<Q extends QueueName>(queue: Q, body: QueueJob<Q>, delaySeconds = 0): Promise<void> {
    const { client, sdk } = await sqs();
    await client.send(
      new sdk.SendMessageCommand({
        QueueUrl: urlOf(queue),
        MessageBody: JSON.stringify(body),
        DelaySeconds: delaySeconds,
      }),
    );
  },

  /**
   * When a received message shows again (seconds from now, ≤ 12 h): a consumer that reports the
   * message as failed sets its retry delay this way, and SQS counts the receive towards the DLQ.
   */
  async changeVisibility(queue: QueueName, receiptHandle: string, seconds: number): Promise<void> {
    const { client, sdk } = await sqs();
    await client.send(
      new sdk.ChangeMessageVisibilityCommand({
        QueueUrl: urlOf(queue),
        ReceiptHandle: receiptHandle,
        VisibilityTimeout: Math.max(0, Math.min(43_200, Math.round(seconds))),
      }),
    );
  },

  /** Sends up to 10 bodies; returns the indexes SQS did not accept. */
  async sendBatch<Q extends QueueName>(queue: Q, bodies: readonly QueueJob<Q>[]): Promise<number[]> {
    if (bodies.length === 0) return [];
    const { client, sdk } = await sqs();
    const { Failed = [] } = await client.send(
      new sdk.SendMessageBatchCommand({
        QueueUrl: urlOf(queue),
        Entries: bodies.map((body, i) => ({ Id: String(i), MessageBody: JSON.stringify(body) })),
      }),
    );
    return Failed.map((failure) => Number(failure.Id));
  },
};
