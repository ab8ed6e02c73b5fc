import { Duration, Tags } from 'aws-cdk-lib';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { workerDefinitions, workerEntry } from '../../../functions/workers';
import { queueDefinitions } from '../../../shared/resources';
import type { DashboardQueue } from '../../constructs/dashboard';
import { ServiceFunction } from '../../constructs/service-function';
import { acknowledge, reasons } from '../../nag';
import { workerBuildProps } from './build';
import {
  cursorKeyRotationEntry,
  type FunctionDefaults,
  type FunctionEntry,
  pascal,
  type StackScope,
  WORKER_TAG,
} from './context';
import { grantNeeds, propsForNeeds } from './grants';
import type { Realtime } from './realtime';
import type { Secrets } from './secrets';
import type { Storage } from './storage';

/**
 * The background workers, each wired to its event source as its definition says
 * (functions/workers.ts): an SQS queue, or the table's stream with an on-failure queue; and the
 * cursor key ring's rotation function.
 */
export class Workers {
  readonly functions: readonly FunctionEntry[];
  /** The stream workers' on-failure queues by alarm id (nobody consumes them: alarmed). */
  readonly streamFailureQueues: readonly [string, Queue][];
  readonly dashboardQueues: readonly DashboardQueue[];

  constructor(
    stack: StackScope,
    props: { storage: Storage; secrets: Secrets; realtime: Realtime; defaults: FunctionDefaults },
  ) {
    const { table, queues } = props.storage;
    const { secrets, realtime } = props;
    const { environment, logsKey, reserved } = props.defaults;
    const functions: FunctionEntry[] = [];
    const dashboardQueues: DashboardQueue[] = [];
    const streamFailureQueues: [string, Queue][] = [];
    for (const worker of workerDefinitions) {
      const workerId = pascal(worker.name);
      const grantScope = { stack, storage: props.storage, secrets, realtime };
      const fn = new ServiceFunction(stack, `${workerId}Worker`, {
        entry: workerEntry(worker.name),
        description: worker.description,
        timeout: Duration.seconds(worker.timeoutSeconds),
        environment: { ...environment, SERVICE_FUNCTION: worker.name },
        logsKey,
        reservedConcurrentExecutions: reserved(worker.name),
        ...workerBuildProps(worker),
        ...propsForNeeds(worker, grantScope),
      });
      grantNeeds(fn, worker.name, worker, grantScope);
      const { source } = worker;
      if (source.kind === 'queue') {
        const queue = queues.get(source.queue);
        const definition = queueDefinitions.find((q) => q.name === source.queue);
        // Lambda refuses an SQS trigger whose visibility timeout is shorter than the function's timeout.
        if (!queue || !definition || definition.visibilityTimeoutSeconds < worker.timeoutSeconds) {
          throw new Error(`Worker ${worker.name}: queue ${source.queue} is missing or times out before it`);
        }
        // Never more batches in flight than the function may run: throttled receives count towards
        // maxReceiveCount and would dead-letter healthy messages.
        const ceiling = reserved(worker.name);
        if (ceiling !== undefined && ceiling < 2) {
          throw new Error(`Worker ${worker.name}: a queue worker needs a reserved concurrency of 2 or more`);
        }
        acknowledge(fn, {
          'Serverless-LambdaEventSourceMappingDestination':
            "An SQS event source has no on-failure destination: a message that keeps failing returns to the queue and moves to the queue's dead-letter queue after maxReceiveCount (alarmed; redrive in docs/operations.md).",
        });
        fn.addEventSource(
          new SqsEventSource(queue, {
            batchSize: source.batchSize,
            maxConcurrency: Math.min(source.maxConcurrency, ceiling ?? source.maxConcurrency),
            reportBatchItemFailures: true,
          }),
        );
      } else {
        // After its retries a failing batch is not dropped: its shard and sequence numbers land here.
        const failures = new Queue(stack, `${workerId}StreamFailures`, {
          encryption: QueueEncryption.SQS_MANAGED,
          enforceSSL: true,
          retentionPeriod: Duration.days(14),
        });
        Tags.of(failures).add('service:stream-failures', worker.name);
        acknowledge(failures, {
          'AwsSolutions-SQS3': reasons.deadLetterQueue,
          'Serverless-SQSRedrivePolicy': reasons.deadLetterQueue,
        });
        streamFailureQueues.push([`${workerId}StreamFailures`, failures]);
        dashboardQueues.push({ name: worker.name, queue: failures, kind: 'stream failures' });
        fn.addEventSource(
          new DynamoEventSource(table, {
            startingPosition: StartingPosition.TRIM_HORIZON,
            batchSize: source.batchSize,
            reportBatchItemFailures: true,
            bisectBatchOnError: true,
            retryAttempts: source.retryAttempts,
            maxRecordAge: Duration.seconds(source.maxRecordAgeSeconds),
            onFailure: new SqsDlq(failures),
            // Only the entities the worker reads invoke it (the local consumer applies the same filter).
            filters: [
              FilterCriteria.filter({
                dynamodb: { NewImage: { entity: { S: FilterRule.or(...source.entities) } } },
              }),
              ...(source.removals?.length
                ? [
                    FilterCriteria.filter({
                      eventName: FilterRule.isEqual('REMOVE'),
                      dynamodb: { OldImage: { entity: { S: FilterRule.or(...source.removals) } } },
                    }),
                  ]
                : []),
            ],
          }),
        );
      }
      Tags.of(fn).add(WORKER_TAG, worker.name);
      functions.push({ name: worker.name, id: `${workerId}Worker`, fn, stream: source.kind === 'stream' });
    }

    // A custom rotation function: hosted rotations only exist for database credentials.
    const rotation = new ServiceFunction(stack, 'CursorKeyRotationFunction', {
      entry: cursorKeyRotationEntry,
      description: 'rotates the cursor signing key ring (Secrets Manager rotation steps)',
      timeout: Duration.seconds(30),
      memorySize: 256,
      logsKey,
      reservedConcurrentExecutions: reserved('cursor-key-rotation'),
    });
    Tags.of(rotation).add('service:rotation', 'cursor-signing-key');
    secrets.cursorSigningKey.addRotationSchedule('Rotation', {
      rotationLambda: rotation,
      automaticallyAfter: Duration.days(30),
    });
    functions.push({ name: 'cursor-key-rotation', id: 'CursorKeyRotation', fn: rotation });

    this.functions = functions;
    this.streamFailureQueues = streamFailureQueues;
    this.dashboardQueues = dashboardQueues;
  }
}
