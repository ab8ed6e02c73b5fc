/**
 * Phase 7, in its own process: export volume. Starts the local stack (DynamoDB Local, SQS/S3, SES,
 * gateway; no workers), and for each size seeds an organization with that many messages (in
 * max(2,000, messages / 50) conversations, one of them of 5,000 messages) straight into the table,
 * then exports it as CSV and as JSON, each time in a fresh process running the exports function
 * bundled as CDK bundles it (export-volume-probe.ts), started with the node flags Lambda's runtime
 * uses for the function's memory (judged), then again with V8's heap capped (cross-check): peak
 * RSS, messages/s, read units. Then a PDF transcript of the 5,000-message conversation: the request
 * through the gateway (202), the worker in its own bundled process fed by the real queue
 * (pdf-worker-probe.ts), the job status polled until `completed`. Prints `@@RESULT <json>`.
 *
 * Sizes: `BENCH_EXPORT_VOLUMES` (comma-separated message counts), which `npm run bench --
 * --export-volume[=…]` sets; the 100,000 reference is always measured. Standalone, with the report:
 * `npx tsx bench/export-volume-main.ts --messages=100000,1000000 --report`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';
import { type WorkerDefinition, workerDefinitions } from '../functions/workers';
import { execWrapper, nodeFlags } from '../infra/function-tuning';
import { type LocalStack, startLocalStack } from '../infra/local/stack';
import { EXPORT_TARGETS, reportExportVolume } from './export-volume-report';
import { benchCacheRoot, cdkBuildOptions, projectRoot } from './options';
import {
  type ExportRun,
  type ExportVolumeResult,
  type ExportVolumeSet,
  type HeapMode,
  type PdfJobResult,
  type PdfWorkerRun,
  RESULT_MARKER,
} from './protocol';
import { MISS, PASS, type Verdict } from './report';

const say = (line: string) => console.log(`[bench]   ${line}`);
const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The transcript's cap, and the PDF job's conversation. */
const LONG_CONVERSATION = 5_000;
const MESSAGES_PER_CONVERSATION = 50;
const MIN_CONVERSATIONS = 2_000;

/** The sizes to measure, smallest first; the reference size always among them. */
function volumesFrom(value: string | undefined): number[] {
  const sizes = (value ?? '')
    .split(',')
    .map((part) => Number(part.trim()))
    .filter((size) => Number.isInteger(size) && size > LONG_CONVERSATION);
  return [...new Set([EXPORT_TARGETS.referenceMessages, ...sizes])].sort((a, b) => a - b);
}

/** The functions' memory size, as the CDK construct sets it (read, not imported: no aws-cdk-lib). */
function functionMemoryMb(): number {
  const source = readFileSync(join(projectRoot, 'infra/constructs/service-function.ts'), 'utf8');
  return Number(/memorySize: (\d+)/.exec(source)?.[1] ?? 512);
}

/**
 * The heap flags Lambda's Node.js runtime starts node with (its bootstrap, from
 * AWS_LAMBDA_FUNCTION_MEMORY_SIZE: a tenth of the memory for the young generation, in two
 * semi-spaces, the rest for the old one; they come after NODE_OPTIONS, so they win).
 */
function lambdaFlags(memoryMb: number): string[] {
  const newSpace = Math.floor(memoryMb / 10);
  return [`--max-semi-space-size=${Math.floor(newSpace / 2)}`, `--max-old-space-size=${memoryMb - newSpace}`];
}

/** A small young generation and old space: the export completes within them or fails. */
const CAPPED_FLAGS = ['--max-semi-space-size=1', '--max-old-space-size=32'];

let stack: LocalStack | undefined;
let bundleDir: string | undefined;
const children = new Set<ChildProcess>();

async function stop(): Promise<void> {
  for (const child of children) child.kill('SIGKILL');
  const running = stack;
  stack = undefined;
  if (running) {
    say('stopping the local stack…');
    await running.stop();
  }
  if (bundleDir) {
    await rm(bundleDir, { recursive: true, force: true });
    await rmdir(benchCacheRoot).catch(() => undefined);
    bundleDir = undefined;
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void stop().finally(() => process.exit(130));
  });
}

/** Bundles a probe as CDK bundles a function; the PDF worker's run-time files go beside it. */
async function bundle(
  entry: string,
  dir: string,
  { bundledFiles: files = [], aliases }: Pick<WorkerDefinition, 'bundledFiles' | 'aliases'> = {},
) {
  const outfile = join(dir, 'probe.mjs');
  await build({
    ...cdkBuildOptions,
    absWorkingDir: projectRoot,
    entryPoints: [join(projectRoot, entry)],
    outfile,
    ...(aliases && { alias: { ...aliases } }),
  });
  for (const file of files) {
    const target = join(dir, file.to);
    await mkdir(dirname(target), { recursive: true });
    await copyFile(join(projectRoot, file.from), target);
  }
  return outfile;
}

/**
 * Runs a bundled probe with plain node; `onLine` sees its other output lines. Resolves its result.
 */
function runProbe<T>(
  file: string,
  flags: readonly string[],
  env: Record<string, string>,
  timeoutMs: number,
  onLine: (line: string) => void = say,
  wrapperFlags: readonly string[] = [],
): Promise<T> {
  return new Promise((resolve, reject) => {
    // Lambda's runtime passes --expose-gc too.
    const command = [process.execPath, '--expose-gc', ...flags, '--no-warnings', file];
    // As deployed: the function's exec wrapper (the script itself) adds its flags to the command line.
    const [program = process.execPath, ...args] =
      wrapperFlags.length > 0 ? [execWrapper.source, ...command] : command;
    const child = spawn(program, args, {
      cwd: projectRoot,
      env: { ...process.env, ...env, [execWrapper.flagsVar]: wrapperFlags.join(' ') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let result: T | undefined;
    let pending = '';
    let errors = '';
    const line = (text: string) => {
      if (text.startsWith(RESULT_MARKER)) result = JSON.parse(text.slice(RESULT_MARKER.length)) as T;
      else if (text.trim()) onLine(text);
    };
    child.stdout.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const each of lines) line(each);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      errors += chunk.toString();
    });
    const timer = setTimeout(() => {
      errors += `\n(timed out after ${timeoutMs / 1000} s)`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      children.delete(child);
      if (pending) line(pending);
      if (result !== undefined) resolve(result);
      else
        reject(new Error(`${file} exited with ${code}: ${errors.trim().split('\n').slice(-10).join('\n')}`));
    });
  });
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

let exitCode = 0;
try {
  const sizes = volumesFrom(
    process.argv.find((arg) => arg.startsWith('--messages='))?.slice(11) ?? process.env.BENCH_EXPORT_VOLUMES,
  );
  const memoryMb = functionMemoryMb();
  const flags: Record<HeapMode, string[]> = { lambda: lambdaFlags(memoryMb), capped: CAPPED_FLAGS };
  // Judged as deployed: the exports function's exec wrapper adds its flags (infra/function-tuning.ts).
  const wrapped: Record<HeapMode, readonly string[]> = { lambda: nodeFlags.exports ?? [], capped: [] };
  const started = Date.now();
  say('starting the local stack (DynamoDB Local, SQS/S3, SES, gateway; no workers)…');
  stack = await startLocalStack({
    port: 0,
    seedDemo: false,
    runWorkers: false,
    env: { POWERTOOLS_LOG_LEVEL: 'ERROR' },
    progress: (line) => say(`  ${line}`),
  });
  say(`local stack ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  // Loaded now: the data layer reads its configuration (table, endpoints) at import.
  const { organizations } = await import('../shared/db/organizations');
  const { credentials } = await import('../shared/db/credentials');
  const { operators } = await import('../shared/db/operators');
  const { visitors } = await import('../shared/db/visitors');
  const { seedVolume } = await import('./export-volume-seed');

  await mkdir(benchCacheRoot, { recursive: true });
  bundleDir = await mkdtemp(join(benchCacheRoot, 'export-volume-'));
  const pdfWorker = workerDefinitions.find((worker) => worker.name === 'pdf-transcript');
  const [exportProbe, pdfProbe] = await Promise.all([
    bundle('bench/export-volume-probe.ts', join(bundleDir, 'export')),
    bundle('bench/pdf-worker-probe.ts', join(bundleDir, 'pdf'), pdfWorker),
  ]);
  say(`probes bundled with the CDK options into ${bundleDir}`);

  const result: ExportVolumeResult = {
    sets: [],
    runtime: `node ${process.version}, the functions bundled with the CDK options (esbuild, minified, ESM) and run by plain node`,
    functionMemoryMb: memoryMb,
    lambdaFlags: flags.lambda.join(' '),
    wrapperFlags: (nodeFlags.exports ?? []).join(' '),
    cappedFlags: flags.capped.join(' '),
    pdfTimeoutSeconds: pdfWorker?.timeoutSeconds ?? 120,
  };
  let pdfTarget: { apiKey: string; conversationId: string } | undefined;

  for (const size of sizes) {
    const conversations = Math.max(MIN_CONVERSATIONS, Math.round(size / MESSAGES_PER_CONVERSATION));
    say(
      `seeding ${size.toLocaleString('en')} messages in ${(conversations + 1).toLocaleString('en')} conversations (one of ${LONG_CONVERSATION.toLocaleString('en')})…`,
    );
    const organization = await organizations.create({
      name: `Export volume ${size}`,
      modules: ['automation_api'],
      locales: ['en'],
      defaultLocale: 'en',
      historyWindowDays: null,
    });
    const key = await credentials.createApiKey(organization.id, { name: 'bench export', scopes: [] });
    if (!key) throw new Error('no API key');
    const operatorIds: string[] = [];
    for (let i = 0; i < 20; i++) {
      const created = await operators.create(organization.id, {
        name: `Operator ${i + 1}`,
        email: `operator${i + 1}@volume.example`,
        role: 'operator',
      });
      if (created.ok) operatorIds.push(created.operator.id);
    }
    const visitorList = [];
    for (let i = 0; i < 100; i++) {
      const created = await visitors.createWithToken(
        organization.id,
        { identifier: `visitor${i + 1}@volume.example` },
        1,
      );
      visitorList.push(created.visitor);
    }
    const seeded = await seedVolume({
      orgId: organization.id,
      messages: size,
      conversations,
      longConversationMessages: LONG_CONVERSATION,
      operatorIds,
      visitors: visitorList,
      parallel: 8,
      progress: (line) => say(`  ${line}`),
    });
    say(
      `seeded ${seeded.messages.toLocaleString('en')} messages, ${seeded.conversations.toLocaleString('en')} conversations (${seeded.items.toLocaleString('en')} items) in ${(seeded.ms / 1000).toFixed(1)} s (${Math.round(seeded.messages / (seeded.ms / 1000)).toLocaleString('en')} messages/s)`,
    );
    pdfTarget ??= { apiKey: key.key, conversationId: seeded.longConversationId };
    const set: ExportVolumeSet = {
      messages: seeded.messages,
      conversations: seeded.conversations,
      seededItems: seeded.items,
      seedMs: seeded.ms,
      runs: [],
      errors: [],
    };
    for (const heap of ['lambda', 'capped'] as const) {
      for (const format of ['csv', 'json'] as const) {
        say(
          `exporting ${size.toLocaleString('en')} messages as ${format.toUpperCase()} (fresh bundled process, ${[...flags[heap], ...wrapped[heap]].join(' ')})…`,
        );
        try {
          const run = await runProbe<ExportRun>(
            exportProbe,
            flags[heap],
            { BENCH_EXPORT_FORMAT: format, BENCH_API_KEY: key.key, BENCH_HEAP: heap },
            // Generous: ~1,000 messages/s would still finish.
            Math.max(120_000, size * 2),
            say,
            wrapped[heap],
          );
          say(
            `  ${run.status}, ${run.rows.toLocaleString('en')} rows, ${run.messages.toLocaleString('en')} messages, ${mb(run.bytes)} in ${(run.elapsedMs / 1000).toFixed(1)} s; peak RSS ${mb(run.peakRss)} (baseline ${mb(run.baselineRss)})`,
          );
          set.runs.push(run);
        } catch (error) {
          set.errors.push(`${format} (${heap} heap): ${message(error)}`);
          say(`  failed: ${message(error)}`);
        }
      }
    }
    result.sets.push(set);
  }

  if (pdfTarget) {
    try {
      result.pdf = await pdfJob(pdfProbe, flags.lambda, pdfTarget);
    } catch (error) {
      result.pdfError = message(error);
      say(`PDF job failed: ${result.pdfError}`);
    }
  }
  await stop();
  console.log(`${RESULT_MARKER}${JSON.stringify(result)}`);
  if (process.argv.includes('--report')) {
    const verdicts: Verdict[] = [];
    reportExportVolume(result, verdicts);
    const misses = verdicts.filter((verdict) => !verdict.ok);
    console.log('');
    for (const miss of misses) console.log(`  ${MISS} ${miss.what}: ${miss.detail}`);
    console.log(
      `${misses.length ? MISS : PASS} export volume: ${verdicts.length - misses.length}/${verdicts.length} targets met`,
    );
  }
} catch (error) {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  exitCode = 1;
} finally {
  await stop().catch((error: unknown) => {
    console.error('stopping failed', error);
  });
}
process.exit(exitCode);

/**
 * The PDF transcript of the long conversation: a worker process ready on the queue, the request
 * (202), the job polled every 50 ms until it leaves `queued`/`running`.
 */
async function pdfJob(
  probe: string,
  flags: readonly string[],
  target: { apiKey: string; conversationId: string },
): Promise<PdfJobResult> {
  const running = stack;
  if (!running) throw new Error('no stack');
  const { queueDefinitions } = await import('../shared/resources');
  const definition = queueDefinitions.find((each) => each.name === 'pdf-jobs');
  const queueUrl = definition && process.env[definition.envVar];
  if (!queueUrl) throw new Error('no pdf-jobs queue URL');
  say(
    `PDF transcript of ${LONG_CONVERSATION.toLocaleString('en')} messages: starting the worker (bundled process)…`,
  );
  let ready: () => void = () => undefined;
  const isReady = new Promise<void>((resolve) => {
    ready = resolve;
  });
  const worker = runProbe<PdfWorkerRun>(
    probe,
    flags,
    { BENCH_PDF_QUEUE_URL: queueUrl, BENCH_PDF_QUEUE_ARN: 'arn:aws:sqs:local:000000000000:pdf-jobs' },
    180_000,
    (line) => (line === 'ready' ? ready() : say(`  ${line}`)),
    nodeFlags['pdf-transcript'] ?? [],
  );
  await Promise.race([isReady, worker]);
  const headers = { Authorization: `Bearer ${target.apiKey}` };
  const requested = await fetch(
    `${running.baseUrl}/api/conversations/${target.conversationId}/transcript?format=pdf`,
    { headers },
  );
  const accepted = (await requested.json()) as { statusUrl?: string };
  const t0 = performance.now();
  if (requested.status !== 202 || !accepted.statusUrl) {
    throw new Error(`transcript request answered ${requested.status}`);
  }
  let status = 'queued';
  let downloadUrl: string | undefined;
  while (status === 'queued' || status === 'running') {
    if (performance.now() - t0 > 170_000) throw new Error(`job still ${status} after 170 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const polled = await fetch(`${running.baseUrl}${accepted.statusUrl}`, { headers });
    if (polled.status === 429) continue;
    const job = (await polled.json()) as { status: string; downloadUrl?: string };
    status = job.status;
    downloadUrl = job.downloadUrl;
  }
  const completedMs = performance.now() - t0;
  const run = await worker;
  let pdfBytes = 0;
  let isPdf = false;
  if (downloadUrl) {
    const file = Buffer.from(await (await fetch(downloadUrl)).arrayBuffer());
    pdfBytes = file.length;
    isPdf = file.subarray(0, 5).toString() === '%PDF-';
  }
  say(
    `  ${status} ${(completedMs / 1000).toFixed(2)} s after the 202; ${mb(pdfBytes)} PDF; worker peak RSS ${mb(run.peakRss)} (baseline ${mb(run.baselineRss)})`,
  );
  return { messages: LONG_CONVERSATION, completedMs, status, pdfBytes, isPdf, worker: run };
}
