/**
 * Phase 6, in its own process: bursts of concurrent writers into one conversation. Starts the local
 * stack with the rate limit lifted, then, for 10, 20, 50 and 100 writers, sends that many requests at
 * once into a fresh conversation: message posts (appends, which must all succeed: the contract's 50
 * concurrent posts, each within 2 s) and, separately, PATCHes (versioned read-modify-writes, which
 * retry when they lose and answer 503 with Retry-After when they keep losing for 2 s). Every
 * answer's status and latency is recorded, and so is the handler's own duration from its access
 * line; after the posts, the conversation's `messageCount` is read back. Those bursts hold the
 * stream and queue workers back, so that the wire counts are the writers' own; one more burst of 50
 * posts runs with them, as `npm start` does (they yield to a busy API). In Lambda each request has
 * an instance of its own; here one gateway process serves all writers on two cores, so the client's
 * time also holds that process's queue. Prints `@@RESULT <json>`.
 *
 * Standalone: `npx tsx bench/contention-main.ts`.
 */
import { withAwsSemantics } from '../infra/local/dynamodb-semantics';
import { type RunningEmulator, startDynamoDb } from '../infra/local/emulators';
import { type LocalStack, startLocalStack } from '../infra/local/stack';
import { startWireCounter, type WireCounter, type WireCounts } from './contention-counter';
import {
  type ContentionBurst,
  type ContentionResult,
  RESULT_MARKER,
  type StaggeredPatches,
  type WriteKind,
} from './protocol';

const say = (line: string) => console.log(`[bench]   ${line}`);
const LEVELS = process.env.LEVELS ? process.env.LEVELS.split(',').map(Number) : [10, 20, 50, 100];
const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
const ROUTES: Record<WriteKind, string> = { post: 'postMessage', patch: 'updateConversation' };

let stack: LocalStack | undefined;
let dynamodb: RunningEmulator | undefined;
let counter: WireCounter | undefined;

/**
 * The handler durations since the last reset, by route, from the access lines the stack writes to
 * this process's stdout (swallowed, with the metrics lines: the parent prints what is left).
 */
let handlerMs: Record<string, number[]> = {};
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  if (!text.startsWith('{')) return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
  for (const line of text.split('\n')) {
    if (!line.includes('"message":"request"')) continue;
    try {
      const entry = JSON.parse(line) as { route?: string; durationMs?: number };
      if (entry.route && typeof entry.durationMs === 'number') {
        handlerMs[entry.route] ??= [];
        handlerMs[entry.route]?.push(entry.durationMs);
      }
    } catch {
      // Not one whole line: a partial write is not an access line the logger writes.
    }
  }
  const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
  callback?.();
  return true;
}) as typeof process.stdout.write;

const percentile = (sorted: readonly number[], p: number) =>
  sorted.length ? (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0) : 0;

interface Demo {
  apiKey: string;
  visitorId: string;
  adminOperatorId: string;
}

async function send(url: string, key: string, method: string, body: unknown) {
  const started = performance.now();
  const response = await fetch(url, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  return {
    status: response.status,
    ms: performance.now() - started,
    retryAfter: response.headers.get('retry-after'),
  };
}

async function newConversation(base: string, demo: Demo): Promise<string> {
  const created = await fetch(`${base}/api/conversations`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${demo.apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ visitorId: demo.visitorId, message: 'A busy conversation' }),
  });
  return ((await created.json()) as { id: string }).id;
}

async function messageCountOf(base: string, demo: Demo, id: string): Promise<number> {
  const response = await fetch(`${base}/api/conversations/${id}`, {
    headers: { Authorization: `Bearer ${demo.apiKey}` },
  });
  return ((await response.json()) as { messageCount: number }).messageCount;
}

/**
 * Fairness of the retries: PATCHes arriving one every `spacingMs` (a queue forms behind the first),
 * each answer filed under its arrival order. Fair retries shed the newcomers rather than those that
 * have waited longest: the first half of the arrivals should see no more 503s than the second.
 */
async function staggered(
  base: string,
  demo: Demo,
  writers: number,
  spacingMs: number,
): Promise<StaggeredPatches> {
  const id = await newConversation(base, demo);
  const answers = await Promise.all(
    Array.from({ length: writers }, async (_, writer) => {
      await new Promise((resolve) => setTimeout(resolve, writer * spacingMs));
      return send(`${base}/api/conversations/${id}`, demo.apiKey, 'PATCH', {
        priority: PRIORITIES[writer % PRIORITIES.length],
      });
    }),
  );
  const half = Math.floor(writers / 2);
  const shed = (from: number, to: number) =>
    answers.slice(from, to).filter((answer) => answer.status === 503).length;
  const ok = answers
    .filter((answer) => answer.status === 200)
    .map((answer) => answer.ms)
    .sort((a, b) => a - b);
  return {
    writers,
    spacingMs,
    firstHalfShed: shed(0, half),
    secondHalfShed: shed(half, writers),
    succeeded: ok.length,
    slowestSucceededMs: ok.at(-1) ?? 0,
  };
}

async function burst(
  base: string,
  demo: Demo,
  kind: WriteKind,
  writers: number,
  workers: 'paused' | 'running' = 'paused',
): Promise<ContentionBurst> {
  const id = await newConversation(base, demo);
  const before = kind === 'post' ? await messageCountOf(base, demo, id) : 0;
  handlerMs = {};
  // The stream's consumers wait meanwhile: what is counted is what the writers asked.
  if (workers === 'paused') stack?.pauseWorkers();
  counter?.reset();
  const answers = await Promise.all(
    Array.from({ length: writers }, (_, writer) =>
      kind === 'post'
        ? send(`${base}/api/conversations/${id}/messages`, demo.apiKey, 'POST', {
            content: `Message ${writer + 1} of ${writers}`,
            operatorId: demo.adminOperatorId,
          })
        : send(`${base}/api/conversations/${id}`, demo.apiKey, 'PATCH', {
            priority: PRIORITIES[writer % PRIORITIES.length],
          }),
    ),
  );
  const wire = counter ? await counter.read() : undefined;
  stack?.resumeWorkers();
  const latencies = answers.map((answer) => answer.ms).sort((a, b) => a - b);
  const statuses: Record<string, number> = {};
  for (const answer of answers) statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
  const handler = handlerMs[ROUTES[kind]] ?? [];
  const succeeded = answers.filter((answer) => answer.status < 300).length;
  return {
    kind,
    writers,
    statuses,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies.at(-1) ?? 0,
    handlerMaxMs: handler.length > 0 ? Math.max(...handler) : null,
    unavailableWithoutRetryAfter: answers.filter((answer) => answer.status === 503 && !answer.retryAfter)
      .length,
    countedMessages: kind === 'post' ? (await messageCountOf(base, demo, id)) - before : null,
    succeeded,
    ...(wire ? { wire } : {}),
  };
}

/** `Op calls/write (failed conditions, conflicts, SDK retries)`, for the operations that were called. */
export function describeWire(wire: WireCounts, writes: number): string {
  return Object.entries(wire.byOperation)
    .filter(([op]) => !['GetRecords', 'GetShardIterator', 'DescribeStream'].includes(op))
    .sort(([, a], [, b]) => b.calls - a.calls)
    .map(
      ([op, counts]) =>
        `${op} ${(counts.calls / writes).toFixed(2)} (cond ${counts.conditionFailed}, conflict ${counts.transactionConflicts}, sdk retry ${counts.sdkRetries}${Object.keys(counts.otherErrors).length ? `, ${JSON.stringify(counts.otherErrors)}` : ''})`,
    )
    .join(' · ');
}

let exitCode = 0;
try {
  say('starting the local stack with the rate limit lifted…');
  // DynamoDB Local behind the counting proxy, which the functions reach as their endpoint.
  // As npm start runs it: DynamoDB Local behind the layer that answers as AWS does (docs/local.md).
  dynamodb = await withAwsSemantics(() => startDynamoDb(undefined));
  say(`DynamoDB: ${dynamodb.name}`);
  counter = await startWireCounter(dynamodb.endpoint);
  process.env.AWS_ENDPOINT_URL_DYNAMODB = counter.endpoint;
  stack = await startLocalStack({
    port: 0,
    seedDemo: true,
    // INFO: the access lines carry each request's handler duration.
    env: { POWERTOOLS_LOG_LEVEL: 'INFO', RATE_LIMIT_PER_MINUTE: '1000000' },
  });
  const demo = stack.demo;
  if (!demo) throw new Error('the local stack was started without the demo seed');
  // A warm-up burst: the first requests pay the cold start of the functions they reach.
  await burst(stack.baseUrl, demo, 'post', 5);
  await burst(stack.baseUrl, demo, 'patch', 5);
  const bursts: ContentionBurst[] = [];
  for (const kind of ['post', 'patch'] as const) {
    for (const writers of LEVELS) {
      const measured = await burst(stack.baseUrl, demo, kind, writers);
      bursts.push(measured);
      if (measured.wire) say(`  DynamoDB per write: ${describeWire(measured.wire, writers)}`);
      say(
        `${writers} concurrent ${kind === 'post' ? 'posts' : 'PATCHes'}: statuses ${JSON.stringify(measured.statuses)}, p50 ${measured.p50Ms.toFixed(0)} ms, slowest ${measured.maxMs.toFixed(0)} ms (handler ${measured.handlerMaxMs?.toFixed(0) ?? '?'} ms)${measured.countedMessages === null ? '' : `, messageCount +${measured.countedMessages}`}`,
      );
    }
  }
  // What a newcomer's `npm start` sees: the workers running beside the burst.
  const withWorkers = await burst(stack.baseUrl, demo, 'post', 50, 'running');
  say(
    `50 concurrent posts, workers running: statuses ${JSON.stringify(withWorkers.statuses)}, p50 ${withWorkers.p50Ms.toFixed(0)} ms, slowest ${withWorkers.maxMs.toFixed(0)} ms, messageCount +${withWorkers.countedMessages}`,
  );
  const fairness = await staggered(stack.baseUrl, demo, 50, 20);
  say(
    `50 PATCHes arriving 20 ms apart: ${fairness.succeeded} × 200; 503s among the first 25 arrivals ${fairness.firstHalfShed}, among the last 25 ${fairness.secondHalfShed}`,
  );
  const result: ContentionResult = { bursts, withWorkers, staggered: fairness };
  await stack.stop();
  stack = undefined;
  console.log(`${RESULT_MARKER}${JSON.stringify(result)}`);
} catch (error) {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  exitCode = 1;
} finally {
  await stack?.stop().catch(() => undefined);
  await counter?.close();
  await dynamodb?.stop().catch(() => undefined);
}
process.exit(exitCode);
