/**
 * The tenant ceiling: how fast one organization can write before a partition of the table or of an
 * index stops it in AWS (1,000 WCU/s and 3,000 RCU/s per partition key value, whatever the table's
 * capacity mode). Two phases, on one DynamoDB Local:
 *
 * 1. Per-write figures. The local stack behind the DynamoDB layer with its ledger on
 *    (infra/local/dynamodb-semantics/ledger.ts): each write an integrator makes, N times one after
 *    another, over distinct conversations of one organization and, where that is its natural
 *    pattern, into one conversation. The stream's workers are held during the requests (their
 *    units are then the requests' own) and let go after, so that what they write for the requests
 *    counts too. From the ledger: units per request, where they land, and the ceiling.
 * 2. Scaled run, in a child process (the layer's limits are read once, at its start): the same
 *    organization's mixed load at rate ÷ k under partition limits ÷ k, a few seconds a level.
 *
 * Prints the tables, then `@@RESULT <json>` (for `npm run bench`, which prints them in its report;
 * `TENANT_CEILING_REPORT=off` leaves them out here). `--help` lists the options.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type DynamoDbSemantics,
  readSemanticsConfig,
  startDynamoDbSemantics,
} from '../infra/local/dynamodb-semantics';
import { type RunningEmulator, startDynamoDb } from '../infra/local/emulators';
import { type LocalStack, startLocalStack } from '../infra/local/stack';
import { RESULT_MARKER } from './protocol';
import { type Mix, type Pool, runLevel } from './tenant-ceiling-load';
import {
  reportTenantCeiling,
  type ScaledResult,
  type TenantCeilingResult,
  type WriteFigure,
} from './tenant-ceiling-report';
import {
  type Call,
  createVisitors,
  measureWrite,
  quiet,
  SCENARIOS,
  type Scenario,
  send,
  startConversation,
  type Tenant,
} from './tenant-ceiling-scenarios';

const USAGE = `Usage: npx tsx bench/tenant-ceiling-main.ts [options]

One organization's ceiling in AWS terms: for each write an integrator makes, the write units per
request, the hottest partition key value shared by the tenant's requests, and the rate it allows
(1,000 WCU/s a partition); then a mixed load under the partition limits divided by k, offered at
rate ÷ k. Starts its own DynamoDB Local and local stack (≈ 3–4 minutes with the defaults).

Options:
  --requests=<n>      each write this many times, one after another (default 50, at least 20: a
                      name with a value for nearly every request is per-entity, and a partition
                      sharded by hash shows as fewer values only when the requests outnumber shards)
  --writes=<text>[,…] only the writes whose name contains one of these (e.g. post,PATCH)
  --divisor=<k>       scaled run: partition limits ÷ k, rates ÷ k (default 50: 20 WCU/s a partition)
  --levels=<r>[,…]    scaled run: posts/s in AWS terms, each offered at r ÷ k (default 250,500,1000)
  --seconds=<s>       scaled run: seconds a level (default 5)
  --mix=<p:c:q>       scaled run: posts : creates : PATCHes (default 10:1:1; posts by API key,
                      operator and visitor in turn, over a pool of conversations)
  --pool=<v>          scaled run: visitors of the pool, two conversations each (default 40)
  --concurrency=<n>   scaled run: unanswered requests at most; past it a request is skipped (default 32)
  --only=figures      per-write figures only;  --only=scaled: the scaled run only
  --help              this text

Environment: TENANT_CEILING_REPORT=off prints only the @@RESULT line (npm run bench prints the tables).`;

interface Options {
  requests: number;
  writes: string[];
  divisor: number;
  levels: number[];
  seconds: number;
  mix: Mix;
  pool: number;
  concurrency: number;
  only: 'figures' | 'scaled' | undefined;
  phase: 'scaled' | undefined;
}

function parse(argv: readonly string[]): Options | { error: string } | 'help' {
  const options: Options = {
    requests: 50,
    writes: [],
    divisor: 50,
    levels: [250, 500, 1_000],
    seconds: 5,
    mix: { posts: 10, creates: 1, patches: 1 },
    pool: 40,
    concurrency: 32,
    only: undefined,
    phase: undefined,
  };
  const positive = (arg: string, value: string, minimum = 1): number | { error: string } => {
    const number = Number(value.replaceAll('_', ''));
    return Number.isFinite(number) && number >= minimum ? number : { error: `${arg}: a number ≥ ${minimum}` };
  };
  for (const arg of argv) {
    const [name = '', value = ''] = arg.includes('=')
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg];
    if (name === '--help' || name === '-h') return 'help';
    const numeric = (minimum = 1) => positive(arg, value, minimum);
    let parsed: number | { error: string } = 0;
    switch (name) {
      case '--requests':
        parsed = numeric(MIN_REQUESTS);
        if (typeof parsed === 'number') options.requests = Math.round(parsed);
        break;
      case '--writes':
        options.writes = value
          .split(',')
          .map((part) => part.trim().toLowerCase())
          .filter(Boolean);
        break;
      case '--divisor':
        parsed = numeric();
        if (typeof parsed === 'number') options.divisor = parsed;
        break;
      case '--levels': {
        const levels = value.split(',').map((part) => Number(part.replaceAll('_', '').trim()));
        if (levels.some((level) => !(level > 0))) return { error: `${arg}: posts/s, comma-separated` };
        options.levels = levels;
        break;
      }
      case '--seconds':
        parsed = numeric();
        if (typeof parsed === 'number') options.seconds = parsed;
        break;
      case '--mix': {
        const [posts, creates, patches] = value.split(':').map(Number);
        if (
          !(posts && posts > 0) ||
          !(creates !== undefined && creates >= 0) ||
          !(patches !== undefined && patches >= 0)
        )
          return { error: `${arg}: posts:creates:PATCHes, e.g. 10:1:1` };
        options.mix = { posts, creates, patches };
        break;
      }
      case '--pool':
        parsed = numeric();
        if (typeof parsed === 'number') options.pool = Math.round(parsed);
        break;
      case '--concurrency':
        parsed = numeric();
        if (typeof parsed === 'number') options.concurrency = Math.round(parsed);
        break;
      case '--only':
        if (value !== 'figures' && value !== 'scaled') return { error: `${arg}: figures or scaled` };
        options.only = value;
        break;
      case '--phase':
        if (value !== 'scaled') return { error: `${arg}: internal, scaled only` };
        options.phase = value;
        break;
      default:
        return { error: `unknown option ${arg}` };
    }
    if (typeof parsed === 'object') return parsed;
  }
  return options;
}

const say = (line: string) => console.log(`[bench]   ${line}`);
/**
 * Below this a sharded partition (up to 8 values today) is hard to tell from a per-entity one (a
 * value per request): a name with values for 90 % of the requests is per-entity.
 */
const MIN_REQUESTS = 20;
const load1 = () => (loadavg()[0] ?? 0).toFixed(2);
/** What the stack's functions run with, in both phases. */
const FUNCTION_ENV = {
  POWERTOOLS_LOG_LEVEL: 'ERROR',
  // The per-credential limit (default 1,200 a minute: 20 requests/s for one API key) would stop a
  // tenant long before a partition does: lifted, so that the partitions are what is measured.
  RATE_LIMIT_PER_MINUTE: '1000000',
  // As a warm Lambda instance holds credentials (the local default, 0, reads them every request).
  AUTH_CACHE_TTL_MS: '10000',
};
const NOTE =
  'rate limit lifted (RATE_LIMIT_PER_MINUTE=1000000: the default 1,200/min caps one credential at 20 req/s before any partition); auth cache 10 s as in Lambda; a ceiling assumes the tenant does only that write';

const parsed = parse(process.argv.slice(2));
if (parsed === 'help' || 'error' in parsed) {
  if (parsed !== 'help') console.error(`${parsed.error}\n`);
  console.log(USAGE);
  process.exit(parsed === 'help' ? 0 : 2);
}
const options: Options = parsed;

async function startStack(endpoint: string, seedDemo: boolean): Promise<LocalStack> {
  process.env.AWS_ENDPOINT_URL_DYNAMODB = endpoint;
  return startLocalStack({ port: 0, seedDemo, env: FUNCTION_ENV, progress: (line) => say(`  ${line}`) });
}

/** Phase 2, in this process started again with `--phase=scaled` (the layer's limits divided). */
async function scaledPhase(): Promise<void> {
  const upstream = process.env.TENANT_CEILING_DYNAMODB;
  const poolFile = process.env.TENANT_CEILING_POOL;
  if (!upstream || !poolFile) throw new Error('--phase=scaled is started by the bench itself');
  const { readFile } = await import('node:fs/promises');
  const pool = JSON.parse(await readFile(poolFile, 'utf8')) as Pool;
  const config = { ...readSemanticsConfig(process.env), ledger: 'charges' as const };
  let layer: DynamoDbSemantics | undefined;
  let stack: LocalStack | undefined;
  const result: ScaledResult = {
    divisor: config.partitionDivisor,
    mix: `${options.mix.posts}:${options.mix.creates}:${options.mix.patches} (posts : creates : PATCHes)`,
    levels: [],
  };
  try {
    layer = await startDynamoDbSemantics({ upstream, config });
    say(`scaled run: partition limits ÷ ${config.partitionDivisor}; starting the local stack…`);
    stack = await startStack(layer.endpoint, false);
    const ledger = layer.ledger;
    if (!ledger) throw new Error('the layer started without its ledger');
    // Each function's first request pays its cold start: not in a level.
    const [visitor] = pool.visitors;
    if (visitor) {
      const conversation = visitor.conversations[0];
      const warm: Call[] = [
        {
          method: 'POST',
          path: `/api/conversations/${conversation}/messages`,
          token: pool.tenant.apiKey,
          body: { content: 'warm' },
        },
        {
          method: 'PATCH',
          path: `/api/conversations/${conversation}`,
          token: pool.tenant.apiKey,
          body: { priority: 'low' },
        },
        {
          method: 'POST',
          path: '/api/conversations',
          token: pool.tenant.apiKey,
          body: { visitorId: visitor.id, message: 'warm' },
        },
      ];
      for (const call of warm) await send(stack.baseUrl, call);
    }
    for (const postsPerSecond of options.levels) {
      await quiet(ledger);
      // A full second's bucket for every partition again.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      say(
        `level ${postsPerSecond.toLocaleString('en')} posts/s (AWS): offering ${((postsPerSecond / config.partitionDivisor) * ((options.mix.posts + options.mix.creates + options.mix.patches) / options.mix.posts)).toFixed(1)} requests/s here for ${options.seconds} s…`,
      );
      const level = await runLevel({
        base: stack.baseUrl,
        pool,
        ledger,
        divisor: config.partitionDivisor,
        postsPerSecond,
        seconds: options.seconds,
        mix: options.mix,
        concurrency: options.concurrency,
      });
      result.levels.push(level);
      say(
        `  ${level.sent}/${level.offered} sent, statuses ${JSON.stringify(level.statuses)}, p50 ${Math.round(level.p50Ms)} ms, p99 ${Math.round(level.p99Ms)} ms, ${level.throttles} throttles (${
          level.throttledPartitions
            .slice(0, 3)
            .map((each) => `${each.name} ${each.throttles}`)
            .join(', ') || 'none'
        }), achieved ${Math.round(level.achievedPostsPerSecond)} posts/s (AWS), load ${level.loadAverage}`,
      );
    }
  } catch (error) {
    result.error = error instanceof Error ? (error.stack ?? error.message) : String(error);
  } finally {
    await stack?.stop().catch(() => undefined);
    await layer?.close();
  }
  console.log(`${RESULT_MARKER}${JSON.stringify(result)}`);
}

/** Runs phase 2 in a child with a clean environment (the parent's holds the first stack's endpoints). */
function runScaledChild(env: Record<string, string | undefined>, timeoutMs: number): Promise<ScaledResult> {
  const script = fileURLToPath(import.meta.url);
  const args = [
    '--phase=scaled',
    `--levels=${options.levels.join(',')}`,
    `--seconds=${options.seconds}`,
    `--mix=${options.mix.posts}:${options.mix.creates}:${options.mix.patches}`,
    `--concurrency=${options.concurrency}`,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--no-warnings', '--import', 'tsx', script, ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let result: ScaledResult | undefined;
    let pending = '';
    let errors = '';
    const onLine = (line: string) => {
      if (line.startsWith(RESULT_MARKER))
        result = JSON.parse(line.slice(RESULT_MARKER.length)) as ScaledResult;
      else if (line.trim() && !line.startsWith('{')) console.log(line);
    };
    child.stdout.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) onLine(line);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      errors += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (pending) onLine(pending);
      if (result) resolve(result);
      else
        reject(
          new Error(`the scaled run exited with ${code}: ${errors.trim().split('\n').slice(-10).join('\n')}`),
        );
    });
  });
}

async function main(): Promise<void> {
  const started = Date.now();
  const pristine = { ...process.env };
  const scenarios: Scenario[] = options.writes.length
    ? SCENARIOS.filter((scenario) =>
        options.writes.some((text) => scenario.write.toLowerCase().includes(text)),
      )
    : SCENARIOS;
  const figures: WriteFigure[] = [];
  let figuresError: string | undefined;
  let scaled: ScaledResult | undefined;
  const load = { figures: '?', scaled: '?' };
  let dynamodb: RunningEmulator | undefined;
  let layer: DynamoDbSemantics | undefined;
  let stack: LocalStack | undefined;
  let scratch: string | undefined;
  say(`node ${process.version}, ${availableParallelism()} cores, load ${load1()}; starting DynamoDB Local…`);
  try {
    dynamodb = await startDynamoDb(undefined);
    // Figures at AWS's own limits (nothing is throttled one request at a time); the ledger prices
    // what it is shown, the layer's other parts as the environment says.
    layer = await startDynamoDbSemantics({
      upstream: dynamodb.endpoint,
      config: {
        ...readSemanticsConfig(pristine),
        partitionLimits: true,
        partitionDivisor: 1,
        ledger: 'charges',
      },
    });
    const ledger = layer.ledger;
    if (!ledger) throw new Error('the layer started without its ledger');
    say('starting the local stack (demo organization: the tenant)…');
    stack = await startStack(layer.endpoint, true);
    const demo = stack.demo;
    if (!demo) throw new Error('the local stack was started without the demo seed');
    const tenant: Tenant = {
      organizationId: demo.organizationId,
      apiKey: demo.apiKey,
      session: demo.adminSession,
      operatorId: demo.adminOperatorId,
      widgetKey: demo.widgetKey,
    };
    const base = stack.baseUrl;
    const wantFigures = options.only !== 'scaled' && scenarios.length > 0;
    const wantScaled = options.only !== 'figures' && options.levels.length > 0;
    const calls: Call[][] = [];
    if (wantFigures) {
      say(`fixtures: ${options.requests} widget visitors, then each write's conversations…`);
      const visitors = await createVisitors(base, tenant, options.requests);
      for (const scenario of scenarios)
        calls.push(await scenario.prepare(base, tenant, visitors, options.requests));
    }
    let pool: Pool | undefined;
    if (wantScaled) {
      say(`scaled run's pool: ${options.pool} visitors, two conversations each…`);
      const visitors = await createVisitors(base, tenant, options.pool);
      pool = { tenant, visitors: [] };
      for (const visitor of visitors)
        pool.visitors.push({
          ...visitor,
          conversations: [await startConversation(base, visitor), await startConversation(base, visitor)],
        });
    }
    if (wantFigures) {
      await quiet(ledger);
      ledger.setMode('full');
      const before = load1();
      for (const [i, scenario] of scenarios.entries()) {
        try {
          const figure = await measureWrite(stack, ledger, scenario, calls[i] ?? []);
          figures.push(figure);
          say(
            `${figure.write} (${figure.pattern}): ${figure.wcu.toFixed(1)} WCU/request (path ${figure.wcuPath.toFixed(1)}), hottest shared ${figure.bound ?? '—'} → ${figure.ceiling === null ? '—' : Math.round(figure.ceiling)} req/s; ${JSON.stringify(figure.statuses)}, p50 ${Math.round(figure.p50Ms)} ms`,
          );
        } catch (error) {
          say(
            `✗ ${scenario.write} (${scenario.pattern}): ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      }
      load.figures = `${before}→${load1()}`;
      ledger.setMode('charges');
    }
    await stack.stop();
    stack = undefined;
    await layer.close();
    layer = undefined;
    if (pool) {
      scratch = await mkdtemp(join(tmpdir(), 'tenant-ceiling-'));
      const poolFile = join(scratch, 'pool.json');
      await writeFile(poolFile, JSON.stringify(pool));
      const before = load1();
      try {
        scaled = await runScaledChild(
          {
            ...pristine,
            TENANT_CEILING_DYNAMODB: dynamodb.endpoint,
            TENANT_CEILING_POOL: poolFile,
            DYNAMODB_PARTITION_DIVISOR: String(options.divisor),
            DYNAMODB_PARTITION_LIMITS: 'on',
          },
          240_000 + options.levels.length * (options.seconds * 1000 + 30_000),
        );
      } catch (error) {
        scaled = {
          divisor: options.divisor,
          mix: '',
          levels: [],
          error: error instanceof Error ? error.message : String(error),
        };
      }
      load.scaled = `${before}→${load1()}`;
    }
  } catch (error) {
    figuresError = error instanceof Error ? (error.stack ?? error.message) : String(error);
    say(`✗ ${figuresError}`);
  } finally {
    await stack?.stop().catch(() => undefined);
    await layer?.close().catch(() => undefined);
    await dynamodb?.stop().catch(() => undefined);
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
  const result: TenantCeilingResult = {
    requests: options.requests,
    figures,
    ...(figuresError ? { figuresError } : {}),
    ...(scaled ? { scaled } : {}),
    load,
    elapsedMs: Date.now() - started,
    note: NOTE,
  };
  if (process.env.TENANT_CEILING_REPORT !== 'off') {
    reportTenantCeiling(result);
    console.log(`\n  (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
  console.log(`${RESULT_MARKER}${JSON.stringify(result)}`);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

try {
  if (options.phase === 'scaled') await scaledPhase();
  else await main();
} catch (error) {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
}
// SDK keep-alive sockets and emulator leftovers must not hold the bench open.
process.exit(process.exitCode ?? 0);
