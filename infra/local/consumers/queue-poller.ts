import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { lambdaContext } from '../lambda-event';
import { type Consumer, type QueueHandler, sleep } from './consumer';
import { pollGate, type YieldToRequests } from './yield-to-requests';

/**
 * Lambda's SQS event source, locally: no emulator runs event source mappings, so this loop takes
 * their place between a queue (fauxqs) and a worker's handler, with the same batch semantics.
 */

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
  yieldTo?: YieldToRequests;
}): Consumer {
  const sqs = new SQSClient({ endpoint: options.endpoint, useQueueUrlAsEndpoint: false });
  const held = pollGate(options.yieldTo);
  let running = true;
  let halted = false;
  const report = (error: unknown) => {
    if (!halted) options.onError?.(error);
  };
  const loop = (async () => {
    while (running) {
      await held.open(() => running);
      if (!running) break;
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
          report(error);
        }
        const done = Messages.filter((message) => !failed.has(message.MessageId));
        if (done.length > 0 && !halted) {
          await sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: options.queueUrl,
              Entries: done.map((message, i) => ({ Id: String(i), ReceiptHandle: message.ReceiptHandle })),
            }),
          );
        }
      } catch (error) {
        report(error);
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
    halt: () => {
      running = false;
      halted = true;
      void loop.then(() => sqs.destroy());
    },
    pause: held.pause,
    resume: held.resume,
  };
}
