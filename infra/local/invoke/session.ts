import { relative } from 'node:path';
import type { Progress } from '../emulators';
import { LocalRuntime } from '../runtime';
import { DEFAULT_STATE_FILE, isAlive, readStackState, type StackState } from '../stack-state';
import { credentialValues } from './placeholders';

/**
 * The stack an invocation runs against: a running `npm start` when there is one (so its workers
 * take what the handler queues or writes), else emulators started for this invocation alone. Either
 * way the functions' environment is set here, before any of them loads.
 */

export interface InvokeSession {
  /** `attached`: a running `npm start` (or the tests' stack); `started`: emulators this session started. */
  mode: 'attached' | 'started';
  baseUrl: string;
  /** Placeholder values known so far; computed ones (DEMO_CONVERSATION_ID…) are added when first used. */
  values: Record<string, string>;
  progress: Progress;
  /**
   * The functions' isolates (runtime.ts): each function with its template environment and role, as
   * `npm start` runs them. Without it (unit tests that mock the SDK in-process) handlers run here.
   */
  runtime?: LocalRuntime;
  /** Stops what the session started (DynamoDB Local's JVM included); nothing when attached. */
  close(): Promise<void>;
}

export interface SessionOptions {
  progress?: Progress;
  /** Values for placeholders given by the user (`--set NAME=value`); they win over the stack's. */
  values?: Record<string, string>;
}

function defaultEnvironment(): void {
  // Fake credentials, as the local stack uses: the SDK signs requests, the emulators do not check them.
  process.env.AWS_REGION ??= 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
  process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
}

/**
 * Runs functions in this process against a stack that is already up: its environment (endpoints,
 * table, queue URLs, keys) becomes this process's before any function loads. `seedDemo` writes a
 * demo organization into it when the stack has none (the tests' stack).
 */
export async function attachSession(
  state: Pick<StackState, 'baseUrl' | 'env' | 'platformAdminToken' | 'demo' | 'isolateSpecs'>,
  options: SessionOptions & { seedDemo?: boolean } = {},
): Promise<InvokeSession> {
  const progress = options.progress ?? (() => undefined);
  if (!state.isolateSpecs) throw new Error('the local stack state names no functions: restart npm start');
  Object.assign(process.env, state.env);
  defaultEnvironment();
  const runtime = new LocalRuntime(state.isolateSpecs);
  let demo = state.demo;
  if (!demo && options.seedDemo) {
    const { seedDemo } = await import('../seed');
    demo = await seedDemo();
    progress('demo organization seeded');
  }
  return {
    mode: 'attached',
    baseUrl: state.baseUrl,
    values: { ...credentialValues(state.platformAdminToken, demo), ...options.values },
    progress,
    runtime,
    close: () => runtime.close(),
  };
}

/**
 * The emulators, table, queues, buckets and demo organization of `npm start`, started for this
 * session alone (in memory; an `AWS_ENDPOINT_URL_*` you set is used instead of its emulator). No
 * workers run: the invoked function is the only code that handles anything.
 */
export async function startSession(options: SessionOptions = {}): Promise<InvokeSession> {
  const progress = options.progress ?? (() => undefined);
  defaultEnvironment();
  const { startLocalStack } = await import('../stack');
  const stack = await startLocalStack({
    port: 0,
    seedDemo: true,
    runWorkers: false,
    platformAdminToken: process.env.PLATFORM_ADMIN_TOKEN,
    progress,
  });
  return {
    mode: 'started',
    baseUrl: stack.baseUrl,
    values: { ...credentialValues(stack.platformAdminToken, stack.demo), ...options.values },
    progress,
    runtime: stack.runtime,
    close: () => stack.stop(),
  };
}

/** Whether a state file describes a stack that answers now. */
async function answering(state: StackState): Promise<boolean> {
  if (!isAlive(state.pid)) return false;
  try {
    const response = await fetch(`${state.baseUrl}/api/health`, { signal: AbortSignal.timeout(2_000) });
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * A running `npm start` if its state file says so and it answers, else a stack of its own.
 * `ownStack` skips the look-up.
 */
export async function openSession(
  options: SessionOptions & { stateFile?: string; ownStack?: boolean } = {},
): Promise<InvokeSession> {
  const progress = options.progress ?? (() => undefined);
  const file = options.stateFile ?? DEFAULT_STATE_FILE;
  if (!options.ownStack) {
    const state = readStackState(file);
    if (state && (await answering(state))) {
      progress(`using the running local stack at ${state.baseUrl} (${relative(process.cwd(), file)})`);
      return attachSession(state, options);
    }
    if (state)
      progress(`ignoring ${relative(process.cwd(), file)}: its stack (pid ${state.pid}) is not running`);
    else if (options.stateFile) throw new Error(`${options.stateFile} does not exist`);
  }
  progress(
    options.ownStack
      ? 'starting emulators for this invocation (--own-stack)'
      : 'no local stack running: starting the emulators for this invocation',
  );
  return startSession(options);
}
