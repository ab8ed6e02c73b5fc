import { Session } from 'node:inspector/promises';

/** Self time of this process's main thread by where the code lives, from V8's sampling profiler. */
export interface CpuShare {
  where: string;
  ms: number;
}

const AWS_SDK = /^@(aws-sdk|smithy|aws-crypto)\//;
/** The SQS emulator runs on fastify and its dependencies. */
const EMULATOR = new Set([
  'fauxqs',
  'fastify',
  'find-my-way',
  'avvio',
  'light-my-request',
  'valibot',
  'toad-cache',
  'fast-json-stringify',
  'secure-json-parse',
  'fast-querystring',
  'pino',
  'abstract-logging',
  'rfdc',
]);

function whereOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native / builtins)';
  if (url.startsWith('node:')) return 'Node core (http, net, streams, crypto…)';
  const packages = [...url.matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)/g)];
  const name = packages[packages.length - 1]?.[1];
  if (name) {
    if (AWS_SDK.test(name)) return 'AWS SDK v3 (@aws-sdk, @smithy)';
    if (EMULATOR.has(name) || name.startsWith('@fastify/')) return 'SQS emulator (fauxqs, fastify)';
    return name;
  }
  if (/\/infra\/local\//.test(url)) return 'local stack (gateway, pollers)';
  if (/\/(functions|shared)\//.test(url)) return 'service code (functions, shared)';
  if (/\/test\//.test(url)) return 'bench';
  return url.replace(/^.*\//, '');
}

/** Runs `body` under the sampling profiler (1 ms); the main thread's self time grouped by package. */
export async function profiled<T>(body: () => Promise<T>): Promise<{ result: T; shares: CpuShare[] }> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 1000 });
    await session.post('Profiler.start');
    // A failure of `body` leaves the profiler running: disabling it below stops it.
    const result = await body();
    const { profile } = await session.post('Profiler.stop');
    const where = new Map<number, string>();
    for (const node of profile.nodes)
      where.set(node.id, whereOf(node.callFrame.url, node.callFrame.functionName));
    const totals = new Map<string, number>();
    const samples = profile.samples ?? [];
    const deltas = profile.timeDeltas ?? [];
    for (let i = 0; i < samples.length; i++) {
      const key = where.get(samples[i] ?? -1) ?? '(unknown)';
      totals.set(key, (totals.get(key) ?? 0) + (deltas[i] ?? 0) / 1000);
    }
    const shares = [...totals].map(([key, ms]) => ({ where: key, ms })).sort((a, b) => b.ms - a.ms);
    return { result, shares };
  } finally {
    await session.post('Profiler.disable').catch(() => undefined);
    session.disconnect();
  }
}
