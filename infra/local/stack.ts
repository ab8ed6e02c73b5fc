import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { mintPlatformToken } from '../../shared/auth/tokens';
import { createBuckets, createQueues, createTable, streamArnOf } from './bootstrap';
import {
  type Progress,
  type RunningEmulator,
  startDynamoDb,
  startPostgres,
  startSes,
  startSqsAndS3,
} from './emulators';
import { prepareSearchIndex } from './search-index';
import type { DemoCredentials } from './seed';

export interface LocalStackOptions {
  port: number;
  dataDir?: string | undefined;
  seedDemo: boolean;
  platformAdminToken?: string | undefined;
  /** Extra environment for the functions (rate limits, schedules…); wins over defaults. */
  env?: Record<string, string>;
  /** Run the queue and stream consumers (default). A second stack on the same emulators leaves them to the first. */
  runWorkers?: boolean;
  progress?: Progress;
}

export interface LocalStack {
  baseUrl: string;
  platformAdminToken: string;
  demo: DemoCredentials | undefined;
  endpoints: Record<string, string>;
  tableName: string;
  /** Holds every queue and stream consumer (work piles up in the queues and the stream) … */
  pauseWorkers(): void;
  /** … and lets them go again. */
  resumeWorkers(): void;
  /** Lets the workers finish what they hold (the stream position is saved), then stops everything. */
  stop(): Promise<void>;
  /**
   * Stops everything as `kill -9` of `npm start` would: the workers drop what they hold, nothing is
   * saved, DynamoDB Local is killed (SIGKILL), the in-memory emulators vanish with their queues.
   * For tests of what a restart on the same `dataDir` recovers.
   */
  crash(): Promise<void>;
}

const TABLE_NAME = 'conversation-service-local';
/** A connection string without its password (what is shown and written to the stack state). */
const redactedUrl = (url: string): string => url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
const RESOURCE_PREFIX = 'conversation-service-local';
/** Under DATA_DIR: how far the stream reader has handed the table's stream to the workers. */
export const STREAM_POSITION_FILE = 'stream-position.json';

/**
 * The whole service on one machine: emulators (or endpoints you run yourself, via the SDK's
 * AWS_ENDPOINT_URL_* variables), the table, queues and buckets from the deployed definitions,
 * the local API Gateway over the real handlers, and the demo seed.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const progress = options.progress ?? (() => undefined);
  const started: RunningEmulator[] = [];
  const stopAll = async (how: 'stop' | 'kill' = 'stop') => {
    for (const emulator of started.reverse()) {
      const end = how === 'kill' && emulator.kill ? emulator.kill : emulator.stop;
      await end().catch(() => undefined);
    }
  };
  try {
    const endpoint = async (variable: string, start: () => Promise<RunningEmulator>): Promise<string> => {
      const given = process.env[variable];
      if (given) {
        progress(`using ${variable}=${given}`);
        return given;
      }
      const t0 = Date.now();
      const emulator = await start();
      started.push(emulator);
      progress(`${emulator.name} ready at ${emulator.endpoint} (${Date.now() - t0} ms)`);
      return emulator.endpoint;
    };
    // Fake credentials: the SDK signs requests, the emulators do not check them.
    process.env.AWS_REGION ??= 'us-east-1';
    process.env.AWS_ACCESS_KEY_ID ??= 'local';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'local';

    const [dynamodb, sqsAndS3, ses, searchDatabase] = await Promise.all([
      endpoint('AWS_ENDPOINT_URL_DYNAMODB', () => startDynamoDb(options.dataDir)),
      process.env.AWS_ENDPOINT_URL_SQS && process.env.AWS_ENDPOINT_URL_S3
        ? Promise.resolve('')
        : endpoint('__FAUXQS', startSqsAndS3),
      endpoint('AWS_ENDPOINT_URL_SESV2', startSes),
      endpoint('SEARCH_DATABASE_URL', () => startPostgres(options.dataDir)),
    ]);
    const sqs = process.env.AWS_ENDPOINT_URL_SQS || sqsAndS3;
    const s3 = process.env.AWS_ENDPOINT_URL_S3 || sqsAndS3;

    await createTable(dynamodb, TABLE_NAME);
    await prepareSearchIndex(searchDatabase);
    const queues = await createQueues(sqs, RESOURCE_PREFIX);
    const bucketEnv = await createBuckets(s3, RESOURCE_PREFIX);
    progress('table, queues (with dead-letter queues) and buckets ready');

    const platformAdminToken = options.platformAdminToken || mintPlatformToken();
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_DYNAMODB: dynamodb,
      AWS_ENDPOINT_URL_SQS: sqs,
      AWS_ENDPOINT_URL_S3: s3,
      AWS_ENDPOINT_URL_SESV2: ses,
      TABLE_NAME,
      SEARCH_DATABASE_URL: searchDatabase,
      PLATFORM_ADMIN_TOKEN: platformAdminToken,
      CURSOR_SIGNING_KEY: process.env.CURSOR_SIGNING_KEY ?? randomBytes(32).toString('base64url'),
      POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'WARN',
      // EMF lines are for CloudWatch; locally they would only bury the log. Set to `false` to see them.
      POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true',
      // A development stack may probe AI providers on this machine (an OpenAI-compatible server
      // on loopback); in AWS the variable is unset and only public https targets are reached.
      AI_PROVIDER_ALLOWED_TARGETS: process.env.AI_PROVIDER_ALLOWED_TARGETS ?? 'localhost,127.0.0.1,[::1]',
      ...queues.env,
      ...bucketEnv,
      ...options.env,
    });

    // Imported only now: functions read their configuration once, at load.
    const { startGateway } = await import('./gateway');
    const gateway = await startGateway(options.port);
    const port = gateway.port;
    // The push worker reaches connections through the same Management API shape as in AWS.
    process.env.REALTIME_ENDPOINT = `http://127.0.0.1:${port}`;
    progress(`API listening on http://localhost:${port} (loopback only)`);

    const { workerDefinitions } = await import('../../functions/workers');
    const { startWorkers } = await import('./workers');
    const consumers = await startWorkers({
      workers: options.runWorkers === false ? [] : workerDefinitions,
      sqsEndpoint: sqs,
      dynamodbEndpoint: dynamodb,
      queues: queues.byName,
      streamArn: await streamArnOf(dynamodb, TABLE_NAME),
      // Events committed but not yet handed to the stream workers survive a restart (queued jobs do not).
      streamPositionFile: options.dataDir ? join(options.dataDir, STREAM_POSITION_FILE) : undefined,
      onError: (worker, error) => console.error(`[worker ${worker}]`, error),
    });
    const running = options.runWorkers === false ? 0 : workerDefinitions.length;
    progress(`${running} workers running on ${consumers.length} local pollers (queues and the table stream)`);
    if (options.dataDir && running > 0)
      progress(`the stream reader resumes from ${join(options.dataDir, STREAM_POSITION_FILE)}`);

    let demo: DemoCredentials | undefined;
    if (options.seedDemo) {
      const { seedDemo } = await import('./seed');
      demo = await seedDemo();
      progress('demo organization seeded');
    }

    return {
      baseUrl: `http://localhost:${port}`,
      platformAdminToken,
      demo,
      endpoints: { dynamodb, sqs, s3, ses, search: redactedUrl(searchDatabase) },
      tableName: TABLE_NAME,
      pauseWorkers: () => {
        for (const consumer of consumers) consumer.pause();
      },
      resumeWorkers: () => {
        for (const consumer of consumers) consumer.resume();
      },
      stop: async () => {
        await Promise.all(consumers.map((consumer) => consumer.stop()));
        await gateway.close();
        await stopAll();
      },
      crash: async () => {
        for (const consumer of consumers) consumer.halt();
        await gateway.close();
        await stopAll('kill');
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
