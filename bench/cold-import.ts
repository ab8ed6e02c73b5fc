import { spawn } from 'node:child_process';
import { copyFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { functionEnv } from './options';
import { median } from './report';

/**
 * Runs in a fresh `node` per sample: times `await import(bundle)` alone (not Node's own start-up),
 * in wall-clock and in CPU time (less sensitive to other processes competing for the cores), and counts TCP connection attempts made while importing and shortly after, which must be zero.
 */
const RUNNER = `import net from 'node:net';
let attempts = 0;
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  attempts += 1;
  return connect.apply(this, args);
};
const cpu = process.cpuUsage();
const started = process.hrtime.bigint();
const loaded = await import(process.argv[2]);
const elapsed = process.hrtime.bigint() - started;
const used = process.cpuUsage(cpu);
await new Promise((resolve) => setTimeout(resolve, 25));
process.stdout.write(
  JSON.stringify({ ns: Number(elapsed), cpuNs: (used.user + used.system) * 1000, attempts, exports: Object.keys(loaded) }),
);
`;

export interface ImportTiming {
  name: string;
  samplesNs: number[];
  medianNs: number;
  /** CPU time (user + system, all threads) of the same imports. */
  medianCpuNs: number;
  networkAttempts: number;
  exports: string[];
}

interface Sample {
  ns: number;
  cpuNs: number;
  attempts: number;
  exports: string[];
}

function importOnce(runner: string, bundle: string, cwd: string): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--no-warnings', runner, pathToFileURL(bundle).href], {
      cwd,
      // A clean environment: nothing of this process (NODE_OPTIONS, tsx loaders) leaks in.
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? cwd, ...functionEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) {
        reject(new Error(`importing ${basename(bundle)} failed (exit ${code}): ${stderr.trim()}`));
        return;
      }
      try {
        resolve(JSON.parse(stdout) as Sample);
      } catch {
        reject(new Error(`unreadable timing from ${basename(bundle)}: ${stdout} ${stderr}`));
      }
    });
  });
}

/**
 * Copies the bundles into `dir` (which must sit under the project so `@aws-sdk/*` resolves), then
 * imports each one `runs` times in fresh processes, round-robin so that background load drifts over
 * all bundles alike. One unrecorded import per bundle first warms the file-system cache.
 */
export async function timeColdImports(
  bundles: readonly { name: string; file: string }[],
  dir: string,
  runs: number,
  onRun: (run: number) => void,
): Promise<ImportTiming[]> {
  const runner = join(dir, 'import-timer.mjs');
  await writeFile(runner, RUNNER);
  const placed = await Promise.all(
    bundles.map(async (bundle) => {
      const file = join(dir, basename(bundle.file));
      await copyFile(bundle.file, file);
      return { name: bundle.name, file };
    }),
  );
  const samples = new Map<string, Sample[]>(placed.map((bundle) => [bundle.name, []]));
  for (const bundle of placed) await importOnce(runner, bundle.file, dir);
  for (let run = 0; run < runs; run++) {
    onRun(run);
    // Rotate the order each run so no bundle always goes first or last.
    for (let i = 0; i < placed.length; i++) {
      const bundle = placed[(i + run) % placed.length];
      if (!bundle) continue;
      samples.get(bundle.name)?.push(await importOnce(runner, bundle.file, dir));
    }
  }
  return placed.map((bundle) => {
    const taken = samples.get(bundle.name) ?? [];
    const samplesNs = taken.map((sample) => sample.ns);
    return {
      name: bundle.name,
      samplesNs,
      medianNs: median(samplesNs),
      medianCpuNs: median(taken.map((sample) => sample.cpuNs)),
      networkAttempts: Math.max(0, ...taken.map((sample) => sample.attempts)),
      exports: taken[0]?.exports ?? [],
    };
  });
}
