import { INITIAL_QUEUE_POLLERS, type WorkerDefinition } from '../../functions/workers';
import type { Consumer, QueueHandler, StreamHandler } from './consumers/consumer';
import { startQueueConsumer } from './consumers/queue-poller';
import { startStreamConsumers } from './consumers/stream-reader';
import type { StreamSubscriber } from './consumers/stream-subscription';
import type { YieldToRequests } from './consumers/yield-to-requests';
import type { LocalRuntime } from './runtime';

/**
 * Runs every worker of the registry against its local event source, as Lambda would in AWS: each
 * batch is handed to the worker's own isolate (runtime.ts).
 */
export async function startWorkers(options: {
  workers: readonly WorkerDefinition[];
  runtime: LocalRuntime;
  sqsEndpoint: string;
  dynamodbEndpoint: string;
  queues: Map<string, { url: string; arn: string }>;
  streamArn: string;
  /** Where the stream reader keeps its position between runs (under DATA_DIR); none: from the newest record. */
  streamPositionFile?: string | undefined;
  onError: (worker: string, error: unknown) => void;
  /** When the pollers hold back for the API (none: they never do). */
  yieldTo?: YieldToRequests;
}): Promise<Consumer[]> {
  const yieldTo = options.yieldTo ? { yieldTo: options.yieldTo } : {};
  const consumers: Consumer[] = [];
  const subscribers: StreamSubscriber[] = [];
  for (const worker of options.workers) {
    const isolate = options.runtime.get(worker.name);
    const module = {
      handler: ((event: unknown) => isolate.invoke(event)) as QueueHandler & StreamHandler,
    };
    const onError = (error: unknown) => options.onError(worker.name, error);
    if (worker.source.kind === 'queue') {
      const queue = options.queues.get(worker.source.queue);
      if (!queue) throw new Error(`worker ${worker.name}: no queue ${worker.source.queue}`);
      const pollers = Math.min(INITIAL_QUEUE_POLLERS, worker.source.maxConcurrency);
      for (let i = 0; i < pollers; i++) {
        consumers.push(
          startQueueConsumer({
            name: worker.name,
            endpoint: options.sqsEndpoint,
            queueUrl: queue.url,
            queueArn: queue.arn,
            batchSize: worker.source.batchSize,
            handler: module.handler,
            onError,
            ...yieldTo,
          }),
        );
      }
    } else {
      subscribers.push({
        name: worker.name,
        batchSize: worker.source.batchSize,
        entities: worker.source.entities,
        removals: worker.source.removals ?? [],
        handler: module.handler,
        onError,
      });
    }
  }
  if (subscribers.length > 0) {
    consumers.push(
      startStreamConsumers({
        endpoint: options.dynamodbEndpoint,
        streamArn: options.streamArn,
        subscribers,
        positionFile: options.streamPositionFile,
        onError: (error) => options.onError('stream reader', error),
        ...yieldTo,
      }),
    );
  }
  return consumers;
}
