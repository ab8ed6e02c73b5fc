import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mintPlatformToken } from '../../shared/auth/tokens';
import { createBuckets, createQueues, createTable, streamArnOf } from './bootstrap';
import { withAwsSemantics } from './dynamodb-semantics';
import {
  type Progress,
  type RunningEmulator,
  startDynamoDb,
  startPostgres,
  startSes,
  startSqsAndS3,
} from './emulators';
import { type KeyService, startKeyService } from './key-service';
import {
  type FunctionSpec,
  type IsolateKind,
  isolateEnvironment,
  LOCAL_SETTINGS,
  LocalRuntime,
  localAccessKey,
  localSessionToken,
} from './runtime';
import { prepareSearchIndex } from './search-index';
import type { DemoCredentials } from './seed';
import {
  type LocalFunction,
  type LocalResources,
  loadTemplate,
  localBucketKeys,
  localFunctions,
  ROOT,
  type Template,
} from './template';

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
  /** How functions are isolated: worker threads (default) or child processes (LOCAL_ISOLATE=process). */
  isolate?: IsolateKind;
  /** Changes the synthesized template before the functions see it (tests of a missing grant). */
  adjustTemplate?: (template: Template) => Template;
}

export interface LocalStack {
  baseUrl: string;
  platformAdminToken: string;
  demo: DemoCredentials | undefined;
  endpoints: Record<string, string>;
  tableName: string;
  /** Every function of the template as it runs here: its environment and role, resolved. */
  functions: Record<string, LocalFunction>;
  /** The functions' isolates. */
  runtime: LocalRuntime;
  /** What an isolate of this stack gets (for `npm run invoke` attached to it). */
  isolateSpecs: FunctionSpec[];
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
const LOCAL_ACCOUNT = '000000000000';
/** Seals webhook secrets and AI provider keys (the local KMS's key material) unless WEBHOOK_SECRETS_KEY is set. */
const DEVELOPMENT_KEY_SEED = 'local-development-kms-key';
/** A connection string without its password (what is shown and written to the stack state). */
const redactedUrl = (url: string): string => url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
const RESOURCE_PREFIX = 'conversation-service-local';
/** Under DATA_DIR: how far the stream reader has handed the table's stream to the workers. */
export const STREAM_POSITION_FILE = 'stream-position.json';

/**
 * The API has a burst in hand when this many requests are unanswered (two per core of a small
 * machine): the local workers then wait before their next poll, for at most WORKER_YIELD_MAX_MS
 * (the contract's bound on a request) at a time. One client polling, or a few requests at once,
 * never holds them.
 */
const BUSY_API_REQUESTS = 4;
const WORKER_YIELD_MAX_MS = 2_000;

/**
 * The whole service on one machine: emulators (or endpoints you run yourself, via the SDK's
 * AWS_ENDPOINT_URL_* variables), the table, queues and buckets from the deployed definitions,
 * the local API Gateway over the real handlers, and the demo seed.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const progress = options.progress ?? (() => undefined);
  const started: RunningEmulator[] = [];
  const synthesized = loadTemplate(progress);
  // Awaited later: a failure here must not be an unhandled rejection meanwhile.
  synthesized.catch(() => undefined);
  let keyService: KeyService | undefined;
  let runtime: LocalRuntime | undefined;
  const stopAll = async (how: 'stop' | 'kill' = 'stop') => {
    await runtime?.close();
    await keyService?.close();
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
      // DynamoDB Local behind the layer that answers as AWS does (docs/local.md, "DynamoDB as AWS runs it").
      endpoint('AWS_ENDPOINT_URL_DYNAMODB', () => withAwsSemantics(() => startDynamoDb(options.dataDir))),
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

    const { startGateway } = await import('./gateway');
    const gateway = await startGateway(options.port, () => {
      if (!runtime) throw new Error('the functions are not ready yet');
      return runtime;
    });
    const port = gateway.port;
    // The push worker reaches connections through the same Management API shape as in AWS.
    process.env.REALTIME_ENDPOINT = `http://127.0.0.1:${port}`;

    const template = (options.adjustTemplate ?? ((each) => each))(await synthesized);
    const region = process.env.AWS_REGION ?? 'us-east-1';
    const local: LocalResources = {
      region,
      account: LOCAL_ACCOUNT,
      tableName: TABLE_NAME,
      queues: queues.byName,
      buckets: bucketEnv,
      gatewayUrl: `http://127.0.0.1:${port}`,
      parameters: {
        PlatformAdminTokenSha256: createHash('sha256').update(platformAdminToken).digest('hex'),
        LogLevel: process.env.POWERTOOLS_LOG_LEVEL ?? 'WARN',
        DebugLogSampleRate: process.env.POWERTOOLS_LOGGER_SAMPLE_RATE ?? '0',
        ...(process.env.TRANSCRIPT_EMAIL_FROM && {
          TranscriptSenderAddress: process.env.TRANSCRIPT_EMAIL_FROM,
        }),
      },
    };
    const functions = localFunctions(template, local);
    const secretValues: Record<string, string> = {
      CURSOR_SIGNING_KEY_SECRET_ARN: process.env.CURSOR_SIGNING_KEY ?? '',
      DISCORD_BOT_TOKEN_SECRET_ARN: process.env.DISCORD_BOT_TOKEN || 'local-discord-bot-token',
    };
    const secrets: Record<string, string> = {};
    const keys: Record<string, string> = {};
    const keySeed = process.env.WEBHOOK_SECRETS_KEY || DEVELOPMENT_KEY_SEED;
    for (const fn of Object.values(functions))
      for (const [name, value] of Object.entries(fn.environment)) {
        if (secretValues[name] !== undefined) secrets[value] = secretValues[name];
        if (name.endsWith('_KMS_KEY_ID')) keys[value] = keySeed;
      }
    const bucketKeys = localBucketKeys(template, local);
    for (const key of Object.values(bucketKeys)) keys[key] = keySeed;
    keyService = await startKeyService({
      region,
      account: LOCAL_ACCOUNT,
      keys,
      secrets,
      callers: new Map(
        Object.values(functions).flatMap((fn) => {
          const caller = { functionName: fn.name, roleName: fn.roleName, statements: fn.statements };
          return [
            [localAccessKey(fn.name), caller],
            [localSessionToken(fn.name), caller],
          ] as const;
        }),
      ),
    });
    // Locally a revoked key or a changed organization takes effect at once in every function (one
    // developer, many functions); AWS's warm instances trust what they read for 10 s, as the API
    // description says. AUTH_CACHE_TTL_MS=10000 shows AWS's behaviour here.
    const settings: Record<string, string> = { AUTH_CACHE_TTL_MS: '0' };
    for (const name of LOCAL_SETTINGS) {
      const value = process.env[name];
      if (value !== undefined && value !== '') settings[name] = value;
    }
    const { groupEntry, routeCatalog } = await import('../../functions/routes');
    const { bundleDefines } = await import('../function-tuning');
    const { ROUTE_CATALOG_FILE } = await import('../../shared/http/route-catalog');
    // The platform function reads the route catalog its build puts next to its code (in AWS,
    // index.mjs; here the handler's folder, git-ignored), as its define says.
    writeFileSync(join(ROOT, 'functions/platform', ROUTE_CATALOG_FILE), JSON.stringify(routeCatalog()));
    const defines = (name: string): Record<string, string> =>
      Object.fromEntries(
        Object.entries(bundleDefines[name] ?? {})
          .filter(([expression]) => expression.startsWith('process.env.'))
          .map(([expression, value]) => [
            expression.slice('process.env.'.length),
            JSON.parse(value) as string,
          ]),
      );
    const { workerEntry, realtimeConnectionsEntry } = await import('../../functions/workers');
    const queueArns = Object.fromEntries([...queues.byName.values()].map((queue) => [queue.url, queue.arn]));
    const kind: IsolateKind =
      options.isolate ?? (process.env.LOCAL_ISOLATE === 'process' ? 'process' : 'thread');
    const isolateSpecs: FunctionSpec[] = Object.values(functions).map((fn) => ({
      fn,
      entry: join(
        ROOT,
        fn.kind === 'api'
          ? groupEntry(fn.name)
          : fn.kind === 'worker'
            ? workerEntry(fn.name)
            : realtimeConnectionsEntry,
      ),
      env: isolateEnvironment(fn, {
        region,
        account: LOCAL_ACCOUNT,
        endpoints: {
          AWS_ENDPOINT_URL_DYNAMODB: dynamodb,
          AWS_ENDPOINT_URL_SQS: sqs,
          AWS_ENDPOINT_URL_S3: s3,
          AWS_ENDPOINT_URL_SESV2: ses,
          AWS_ENDPOINT_URL_KMS: keyService?.endpoint ?? '',
          AWS_ENDPOINT_URL_SECRETS_MANAGER: keyService?.endpoint ?? '',
          // The secrets extension's port, for the functions the template gives its layer.
          ...(fn.environment.PARAMETERS_SECRETS_EXTENSION_HTTP_PORT && keyService
            ? { PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: new URL(keyService.endpoint).port }
            : {}),
          // The search index's PostgreSQL: in AWS the template's SEARCH_DB_* variables and an IAM
          // token; here the local server's connection string, for the functions the template
          // connects to it, and only those.
          ...(fn.environment.SEARCH_DB_HOST ? { SEARCH_DATABASE_URL: searchDatabase } : {}),
        },
        settings,
      }),
      identity: {
        functionName: fn.name,
        roleName: fn.roleName,
        region,
        account: LOCAL_ACCOUNT,
        statements: fn.statements,
        queueArns,
        bucketKeys,
      },
      kind,
      defines: defines(fn.name),
    }));
    runtime = new LocalRuntime(isolateSpecs);
    progress(
      `API listening on http://localhost:${port} (loopback only); ${isolateSpecs.length} functions, each in its own ${kind === 'thread' ? 'worker thread' : 'child process'} at first use`,
    );

    const { workerDefinitions } = await import('../../functions/workers');
    const { startWorkers } = await import('./workers');
    const consumers = await startWorkers({
      runtime,
      workers: options.runWorkers === false ? [] : workerDefinitions,
      sqsEndpoint: sqs,
      dynamodbEndpoint: dynamodb,
      queues: queues.byName,
      streamArn: await streamArnOf(dynamodb, TABLE_NAME),
      // Events committed but not yet handed to the stream workers survive a restart (queued jobs do not).
      streamPositionFile: options.dataDir ? join(options.dataDir, STREAM_POSITION_FILE) : undefined,
      onError: (worker, error) => console.error(`[worker ${worker}]`, error),
      // The workers share these cores with the API, which in AWS they never do: a burst of requests
      // goes first (docs/local.md, "Workers yield to a busy API").
      yieldTo: { busy: () => gateway.inFlight() >= BUSY_API_REQUESTS, maxMs: WORKER_YIELD_MAX_MS },
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
      functions,
      runtime,
      isolateSpecs,
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
