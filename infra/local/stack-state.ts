import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bucketDefinitions, queueDefinitions } from '../../shared/resources';
import type { FunctionSpec } from './runtime';
import type { DemoCredentials } from './seed';

/**
 * What a running `npm start` tells other local tools (`npm run invoke`, the SAM helper): where its
 * emulators, table, queues and buckets are, the configuration its functions run with, and the demo
 * credentials. Written when the stack is ready, removed when it stops; it holds secrets of the local
 * stack (platform token, demo keys, signing keys), so it is readable by its owner only.
 */
export interface StackState {
  version: 1;
  /** The `npm start` process: a state whose process is gone is stale. */
  pid: number;
  startedAt: string;
  baseUrl: string;
  endpoints: Record<string, string>;
  tableName: string;
  platformAdminToken: string;
  demo: DemoCredentials | undefined;
  /** The environment the stack's functions run with (endpoints, table, queue URLs, keys, tuning). */
  env: Record<string, string>;
  /** Each function's isolate as the stack runs it: entry, template environment, role. */
  isolateSpecs?: FunctionSpec[];
}

/** `<repo>/.local-data/local-stack.json` (git-ignored, as DATA_DIR usually is). */
export const DEFAULT_STATE_FILE = fileURLToPath(
  new URL('../../.local-data/local-stack.json', import.meta.url),
);

/** Variables functions read, besides the queue and bucket variables of `shared/resources.ts`. */
const FUNCTION_ENV = [
  // Never AWS credentials: the emulators ignore them, and a shell may hold real ones.
  'AWS_REGION',
  'AWS_ENDPOINT_URL_DYNAMODB',
  'AWS_ENDPOINT_URL_SQS',
  'AWS_ENDPOINT_URL_S3',
  'AWS_ENDPOINT_URL_SESV2',
  'TABLE_NAME',
  'CURSOR_SIGNING_KEY',
  'PLATFORM_ADMIN_TOKEN',
  'REALTIME_ENDPOINT',
  'RATE_LIMIT_PER_MINUTE',
  'AUTH_CACHE_TTL_MS',
  'OPERATOR_SESSION_TTL_HOURS',
  'VISITOR_TOKEN_TTL_HOURS',
  'WEBHOOK_ALLOWED_TARGETS',
  'WEBHOOK_RETRY_SCHEDULE',
  'WEBHOOK_SECRETS_KEY',
  'DISCORD_API_BASE_URL',
  'DISCORD_BOT_TOKEN',
  'EXPORT_ROW_LIMIT',
  'SERVICE_VERSION',
  'DISCORD_RETRY_SCHEDULE',
  'AI_PROVIDER_ALLOWED_TARGETS',
  'AI_PROVIDER_PROBE_TIMEOUT_MS',
  'IMPERSONATION_TTL_MINUTES',
  'SEARCH_DATABASE_URL',
] as const;

/** The function environment of this process, as the local stack has set it up. */
export function functionEnvironment(from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const names = [
    ...FUNCTION_ENV,
    ...queueDefinitions.map((queue) => queue.envVar),
    ...bucketDefinitions.map((bucket) => bucket.envVar),
  ];
  const env: Record<string, string> = {};
  for (const name of names) {
    const value = from[name];
    if (value !== undefined && value !== '') env[name] = value;
  }
  return env;
}

export function writeStackState(state: StackState, file: string = DEFAULT_STATE_FILE): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
}

export function readStackState(file: string = DEFAULT_STATE_FILE): StackState | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const state = JSON.parse(text) as Partial<StackState>;
  if (state.version !== 1 || typeof state.pid !== 'number' || !state.env || !state.baseUrl) {
    throw new Error(`${file} is not a local stack state file`);
  }
  return state as StackState;
}

/**
 * For an operations command run beside `npm start` (no `TABLE_NAME` set): the running local
 * stack's environment (table, endpoints) and placeholder credentials, where the shell sets none.
 * Throws when there is neither.
 */
export function useLocalStackEnvironment(): void {
  if (process.env.TABLE_NAME) return;
  const state = readStackState();
  if (!state) throw new Error('No running local stack (npm start) and no TABLE_NAME: see --help');
  for (const [name, value] of Object.entries(state.env)) process.env[name] ??= value;
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
}

/** Removes the state file if it still describes this process's stack (a newer `npm start` may own it). */
export function removeStackState(file: string = DEFAULT_STATE_FILE, pid: number = process.pid): void {
  try {
    if (readStackState(file)?.pid === pid) rmSync(file, { force: true });
  } catch {
    // Unreadable: not ours to remove.
  }
}

/** Whether the process that wrote the state still runs. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
