import { type ChildProcess, fork } from 'node:child_process';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { InvocationUsage } from '../../shared/db/meter';
import type { ResponseSink } from '../../shared/http/streaming';
import type { Identity } from './iam/identity';
import type { FromIsolate, SerializedError, ToIsolate } from './isolate-main';
import { type LocalFunction, ROOT } from './template';

/**
 * The local Lambda runtime: each function (route group, `realtime`, worker) runs in an isolate of
 * its own — a worker thread by default (docs/decisions.md: cold start and per-request cost against a
 * child process) — started at its first invocation, as a cold start, and kept for the next ones. Its
 * environment is exactly the function's `Environment` from the synthesized template (resolved to
 * the local resources), plus what the Lambda runtime sets, plus the local-only variables listed in
 * `isolateEnvironment`; nothing else of the host's environment. Its AWS SDK clients are held to its
 * role (iam/enforce.ts). Every invocation comes back with its DynamoDB usage, measured in the isolate
 * (shared/db/meter.ts), which the runtime hands to its `onInvocation` listeners.
 */

export type IsolateKind = 'thread' | 'process';

/** Development settings of `npm start` (docs/local.md, Environment) a function gets when they are set. */
export const LOCAL_SETTINGS = [
  'RATE_LIMIT_PER_MINUTE',
  'AUTH_CACHE_TTL_MS',
  'OPERATOR_SESSION_TTL_HOURS',
  'VISITOR_TOKEN_TTL_HOURS',
  'EXPORT_ROW_LIMIT',
  'TRANSCRIPT_EMAILS_PER_HOUR',
  'IMPERSONATION_TTL_MINUTES',
  'WEBHOOK_ALLOWED_TARGETS',
  'WEBHOOK_RETRY_SCHEDULE',
  'DISCORD_API_BASE_URL',
  'DISCORD_RETRY_SCHEDULE',
  'AI_PROVIDER_ALLOWED_TARGETS',
  'AI_PROVIDER_PROBE_TIMEOUT_MS',
  'POWERTOOLS_METRICS_DISABLED',
] as const;

/** Where a function's isolate reaches the emulators, and the local-only settings in force. */
export interface IsolateContext {
  region: string;
  account: string;
  /** `AWS_ENDPOINT_URL_<SERVICE>` → the emulator or stand-in. */
  endpoints: Readonly<Record<string, string>>;
  /** LOCAL_SETTINGS that are set. */
  settings: Readonly<Record<string, string>>;
}

/** The name Lambda would know the function by (`AWS_LAMBDA_FUNCTION_NAME`). */
export const localFunctionName = (name: string) => `conversation-service-local-${name}`;

/** The access key a function's isolate signs with: how the local key service tells callers apart. */
export const localAccessKey = (name: string) => `LOCAL${name.toUpperCase().replace(/[^A-Z0-9]/g, '')}`;

/** The session token a function's isolate holds: how the local secrets extension tells callers apart. */
export const localSessionToken = (name: string) => `local-${name}`;

/**
 * A function's whole environment: the template's, then Lambda's own variables, then the only local
 * additions — the SDK's endpoint variables and signing credentials (fake: the emulators ignore
 * them, the key service reads the caller from them), tracing off (there is no X-Ray daemon) and
 * the development settings that are set.
 */
export function isolateEnvironment(fn: LocalFunction, context: IsolateContext): Record<string, string> {
  const functionName = localFunctionName(fn.name);
  return {
    ...fn.environment,
    // What the Lambda runtime sets (nodejs22.x); the code is this checkout.
    AWS_REGION: context.region,
    AWS_DEFAULT_REGION: context.region,
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    AWS_LAMBDA_FUNCTION_NAME: functionName,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memorySize),
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${functionName}`,
    AWS_LAMBDA_LOG_STREAM_NAME: 'local',
    LAMBDA_TASK_ROOT: ROOT,
    LANG: 'en_US.UTF-8',
    TZ: ':UTC',
    PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
    NODE_PATH: join(ROOT, 'node_modules'),
    AWS_ACCESS_KEY_ID: localAccessKey(fn.name),
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_SESSION_TOKEN: localSessionToken(fn.name),
    // No X-Ray daemon and no per-invocation trace id here: with tracing on, every traced SDK call
    // of a worker would print "Missing AWS Lambda trace data" instead of recording a subsegment.
    POWERTOOLS_TRACE_ENABLED: 'false',
    ...context.endpoints,
    ...context.settings,
  };
}

interface Channel {
  post(message: ToIsolate): void;
  onMessage(listener: (message: FromIsolate) => void): void;
  /** The isolate is gone (or going): `error` says how. May be called more than once. */
  onExit(listener: (error: Error) => void): void;
  terminate(): Promise<void>;
}

const BOOT = join(ROOT, 'infra/local/isolate-boot.mjs');

function threadChannel(env: Record<string, string>): Channel {
  const worker = new Worker(BOOT, { env, execArgv: [], stdout: false, stderr: false });
  return {
    post: (message) => worker.postMessage(message),
    onMessage: (listener) => worker.on('message', listener),
    onExit: (listener) => {
      // A thread's uncaught error ends it, and is printed nowhere else.
      worker.on('error', (error) =>
        listener(
          new Error(`the isolate exited on an uncaught ${error.name}: ${error.message}`, { cause: error }),
        ),
      );
      worker.on('exit', (code) => listener(new Error(`the isolate exited (${code})`)));
    },
    terminate: async () => {
      await worker.terminate();
    },
  };
}

function processChannel(env: Record<string, string>): Channel {
  const child: ChildProcess = fork(BOOT, [], { env, execArgv: [], serialization: 'advanced', cwd: ROOT });
  return {
    post: (message) => child.send(message),
    onMessage: (listener) => child.on('message', (message) => listener(message as FromIsolate)),
    onExit: (listener) => {
      // A failed send (its channel closed): the child is gone or unreachable.
      child.on('error', (error) =>
        listener(new Error(`the isolate failed: ${error.message}`, { cause: error })),
      );
      child.on('exit', (code, signal) => listener(new Error(`the isolate exited (${code ?? signal})`)));
    },
    terminate: () =>
      new Promise<void>((resolve) => {
        // Killed by a signal, a child has no exit code: it is gone all the same.
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}

const revive = (error: SerializedError): Error =>
  Object.assign(new Error(error.message), { name: error.name, stack: error.stack });

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
  sink?: ResponseSink;
  /** A streamed answer has begun: its status and headers are with the client. */
  headSent?: boolean;
  requestId?: string;
}

/** One started isolate: its channel, the invocations it has not answered, and whether it is done. */
interface Instance {
  channel: Channel;
  pending: Map<number, Pending>;
  /** No longer the function's isolate (it crashed, failed to load its handler, or was closed). */
  retired: boolean;
  /** Its end was handled (a thread reports an uncaught error, then its exit: the first counts). */
  exited: boolean;
}

/** What one invocation cost in DynamoDB, as its isolate measured it. */
export interface InvocationReport {
  /** The function's name here (`conversations`, `webhook-delivery`, `realtime`…). */
  function: string;
  kind: LocalFunction['kind'];
  /** An API Gateway event's `requestContext.requestId` (a request's `X-Request-Id` unless the client sent one). */
  requestId?: string;
  /** The handler answered (or streamed to the end), or failed. */
  outcome: 'answered' | 'failed';
  usage: InvocationUsage;
}

export type InvocationListener = (report: InvocationReport) => void;

const requestIdOf = (event: unknown): string | undefined => {
  const id = (event as { requestContext?: { requestId?: unknown } } | null)?.requestContext?.requestId;
  return typeof id === 'string' ? id : undefined;
};

export interface FunctionSpec {
  fn: LocalFunction;
  /** The handler module, absolute. */
  entry: string;
  env: Record<string, string>;
  identity: Identity | null;
  kind: IsolateKind;
  /** What the bundler defines as `process.env.X` for this function (its build, not its environment). */
  defines: Record<string, string>;
}

/**
 * One function's isolate: started on first use and kept. As Lambda replaces an execution
 * environment whose runtime crashed, an isolate that exits (an uncaught error, `process.exit`)
 * fails the invocations it had in flight, and the next invocation starts a new one.
 */
export class FunctionIsolate {
  private instance: Promise<Instance> | undefined;
  private nextId = 1;
  private clockOffsetMs = 0;
  private traceDynamo = false;

  constructor(
    readonly spec: FunctionSpec,
    private readonly onReport: InvocationListener = () => undefined,
  ) {}

  /** Starts the isolate (a cold start) unless it runs. */
  async start(): Promise<void> {
    await this.open();
  }

  private open(): Promise<Instance> {
    if (this.instance) return this.instance;
    const channel = (this.spec.kind === 'process' ? processChannel : threadChannel)(this.spec.env);
    const instance: Instance = { channel, pending: new Map(), retired: false, exited: false };
    const started = new Promise<Instance>((resolve, reject) => {
      let ready = false;
      channel.onMessage((message) => {
        if (message.type === 'ready') {
          ready = true;
          resolve(instance);
          return;
        }
        if (message.type === 'init-error') {
          // As Lambda after a failed init: the next invocation tries again, in a new isolate.
          this.retire(started, instance);
          reject(revive(message.error));
          return;
        }
        this.receive(instance, message);
      });
      channel.onExit((error) => {
        if (instance.exited) return;
        instance.exited = true;
        // Retired before it ended: closed, or its handler failed to load (already reported).
        const expected = instance.retired;
        this.retire(started, instance);
        if (!ready) return reject(error);
        if (!expected)
          console.error(
            `[function ${this.spec.fn.name}] ${error.message}; ${instance.pending.size} invocation(s) in flight failed, the next invocation starts a new isolate`,
          );
        for (const pending of instance.pending.values()) {
          // An answer already streaming breaks off; any other invocation fails, and the gateway
          // answers 502 as API Gateway does for a function that crashed.
          if (pending.headSent) pending.sink?.destroy(error);
          pending.reject(error);
        }
        instance.pending.clear();
      });
      channel.post({
        type: 'init',
        entry: this.spec.entry,
        functionName: localFunctionName(this.spec.fn.name),
        timeoutMs: this.spec.fn.timeoutSeconds * 1000,
        identity: this.spec.identity,
        defines: this.spec.defines,
        trace: this.traceDynamo,
      });
      if (this.clockOffsetMs !== 0) channel.post({ type: 'clock', offsetMs: this.clockOffsetMs });
    });
    this.instance = started;
    return started;
  }

  /**
   * An isolate that is done: no longer this function's (unless a newer one already is), and
   * stopped, since a thread that reported an uncaught error may still be winding down.
   */
  private retire(started: Promise<Instance>, instance: Instance): void {
    if (instance.retired) return;
    instance.retired = true;
    if (this.instance === started) this.instance = undefined;
    void instance.channel.terminate();
  }

  private report(pending: Pending, outcome: InvocationReport['outcome'], usage: InvocationUsage): void {
    this.onReport({
      function: this.spec.fn.name,
      kind: this.spec.fn.kind,
      ...(pending.requestId !== undefined && { requestId: pending.requestId }),
      outcome,
      usage,
    });
  }

  private receive({ channel, pending: inFlight }: Instance, message: FromIsolate): void {
    if (!('id' in message)) return;
    const pending = inFlight.get(message.id);
    if (!pending) return;
    switch (message.type) {
      case 'result':
        inFlight.delete(message.id);
        this.report(pending, 'answered', message.usage);
        pending.resolve(message.result);
        return;
      case 'error':
        inFlight.delete(message.id);
        this.report(pending, 'failed', message.usage);
        pending.reject(revive(message.error));
        return;
      case 'head':
        pending.headSent = true;
        pending.sink?.writeHead(message.statusCode, message.headers);
        return;
      case 'chunk': {
        const id = message.id;
        if (pending.sink?.write(Buffer.from(message.chunk)) === false)
          pending.sink.once('drain', () => channel.post({ type: 'ack', id }));
        else channel.post({ type: 'ack', id });
        return;
      }
      case 'end':
        inFlight.delete(message.id);
        this.report(pending, 'answered', message.usage);
        pending.sink?.end(() => pending.resolve(undefined));
        return;
      case 'stream-error':
        inFlight.delete(message.id);
        this.report(pending, 'failed', message.usage);
        pending.sink?.destroy(revive(message.error));
        pending.resolve(undefined);
        return;
    }
  }

  /** Invokes the handler with the event; a streaming handler writes its answer to `sink`. */
  async invoke(event: unknown, sink?: ResponseSink): Promise<unknown> {
    const { channel, pending } = await this.open();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const requestId = requestIdOf(event);
      pending.set(id, {
        resolve,
        reject,
        ...(sink && { sink }),
        ...(requestId !== undefined && { requestId }),
      });
      sink?.once('close', () => {
        if (pending.has(id)) channel.post({ type: 'abort', id });
      });
      channel.post({ type: 'invoke', id, event, streaming: Boolean(sink) });
    });
  }

  /** Moves this function's clock (shared/clock.ts) as the tests move theirs. */
  setClockOffset(offsetMs: number): void {
    this.clockOffsetMs = offsetMs;
    // A failed start is its invocation's to report.
    void this.instance?.then(
      ({ channel }) => channel.post({ type: 'clock', offsetMs }),
      () => undefined,
    );
  }

  /** Traces each DynamoDB command of the next invocations (the bench's round-trip counter), or stops. */
  setDynamoTrace(on: boolean): void {
    this.traceDynamo = on;
    void this.instance?.then(
      ({ channel }) => channel.post({ type: 'trace', on }),
      () => undefined,
    );
  }

  async close(): Promise<void> {
    const started = this.instance;
    const instance = await started?.catch(() => undefined);
    if (!started || !instance) return;
    this.retire(started, instance);
    await instance.channel.terminate();
  }
}

/** Every function's isolate, by name. */
export class LocalRuntime {
  readonly isolates = new Map<string, FunctionIsolate>();
  private readonly listeners = new Set<InvocationListener>();

  constructor(specs: readonly FunctionSpec[]) {
    const report: InvocationListener = (each) => {
      for (const listener of this.listeners) listener(each);
    };
    for (const spec of specs) this.isolates.set(spec.fn.name, new FunctionIsolate(spec, report));
  }

  /**
   * Calls `listener` with every invocation's DynamoDB usage as it completes (before the gateway
   * answers the request, so a client that got its answer has its report); returns the unsubscribe.
   */
  onInvocation(listener: InvocationListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get(name: string): FunctionIsolate {
    const isolate = this.isolates.get(name);
    if (!isolate) throw new Error(`no function ${name} in the synthesized template`);
    return isolate;
  }

  setClockOffset(offsetMs: number): void {
    for (const isolate of this.isolates.values()) isolate.setClockOffset(offsetMs);
  }

  /**
   * Every invocation's report then lists its DynamoDB commands one by one (operation, units by
   * table and index, key, the source files that sent it): a stack capture per command, for the bench.
   */
  setDynamoTrace(on: boolean): void {
    for (const isolate of this.isolates.values()) isolate.setDynamoTrace(on);
  }

  async close(): Promise<void> {
    await Promise.all([...this.isolates.values()].map((isolate) => isolate.close()));
  }
}
