/**
 * Phase 6, in its own process: how many concurrent writers one conversation takes before the first
 * 503. Starts the local stack with the rate limit lifted, then, for 1, 2, 4 … 64 writers, each
 * writer PATCHes the same conversation again and again for a few seconds; every answer's status and
 * latency is recorded, and so is the handler's own duration from its access line. The contract: a
 * write that keeps losing answers within 2 s (503 with Retry-After), never later. In Lambda each
 * request has an instance of its own; here one gateway process serves all 64 writers on two cores,
 * so the client's time also holds that process's queue. Prints `@@RESULT <json>`.
 *
 * Standalone: `npx tsx test/bench/contention-main.ts`.
 */
import { type LocalStack, startLocalStack } from '../../infra/local/stack';
import { type ContentionLevel, type ContentionResult, RESULT_MARKER } from './protocol';

const say = (line: string) => console.log(`[bench]   ${line}`);
const LEVELS = [1, 2, 4, 8, 16, 32, 64];
const SECONDS_PER_LEVEL = 3;
const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;

let stack: LocalStack | undefined;

/**
 * The handler durations of the PATCHes since the last reset, from the access lines the stack writes
 * to this process's stdout (swallowed, with the metrics lines: the parent prints what is left).
 */
let handlerMs: number[] = [];
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  if (!text.startsWith('{')) return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
  for (const line of text.split('\n')) {
    if (!line.includes('"message":"request"')) continue;
    try {
      const entry = JSON.parse(line) as { route?: string; durationMs?: number };
      if (entry.route === 'updateConversation' && typeof entry.durationMs === 'number')
        handlerMs.push(entry.durationMs);
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

async function patch(base: string, key: string, id: string, priority: string) {
  const started = performance.now();
  const response = await fetch(`${base}/api/conversations/${id}`, {
    method: 'PATCH',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ priority }),
  });
  await response.arrayBuffer();
  return {
    status: response.status,
    ms: performance.now() - started,
    retryAfter: response.headers.get('retry-after'),
  };
}

async function level(base: string, key: string, id: string, writers: number): Promise<ContentionLevel> {
  const deadline = performance.now() + SECONDS_PER_LEVEL * 1000;
  handlerMs = [];
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let unavailableWithoutRetryAfter = 0;
  await Promise.all(
    Array.from({ length: writers }, async (_, writer) => {
      for (let i = 0; performance.now() < deadline; i++) {
        const answer = await patch(base, key, id, PRIORITIES[(writer + i) % PRIORITIES.length] ?? 'low');
        latencies.push(answer.ms);
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        if (answer.status === 503 && !answer.retryAfter) unavailableWithoutRetryAfter += 1;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return {
    writers,
    requests: latencies.length,
    statuses,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies.at(-1) ?? 0,
    handlerMaxMs: handlerMs.length > 0 ? Math.max(...handlerMs) : null,
    unavailableWithoutRetryAfter,
  };
}

let exitCode = 0;
try {
  say('starting the local stack with the rate limit lifted…');
  stack = await startLocalStack({
    port: 0,
    seedDemo: true,
    // INFO: the access lines carry each request's handler duration.
    env: { POWERTOOLS_LOG_LEVEL: 'INFO', RATE_LIMIT_PER_MINUTE: '1000000' },
  });
  const demo = stack.demo;
  if (!demo) throw new Error('the local stack was started without the demo seed');
  const created = await fetch(`${stack.baseUrl}/api/conversations`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${demo.apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ visitorId: demo.visitorId, message: 'A busy conversation' }),
  });
  const { id } = (await created.json()) as { id: string };
  const levels: ContentionLevel[] = [];
  for (const writers of LEVELS) {
    const measured = await level(stack.baseUrl, demo.apiKey, id, writers);
    levels.push(measured);
    say(
      `${writers} writers: ${measured.requests} PATCHes, statuses ${JSON.stringify(measured.statuses)}, p50 ${measured.p50Ms.toFixed(0)} ms, p99 ${measured.p99Ms.toFixed(0)} ms, max ${measured.maxMs.toFixed(0)} ms (handler ${measured.handlerMaxMs?.toFixed(0) ?? '?'} ms)`,
    );
  }
  const result: ContentionResult = {
    levels,
    firstUnavailableAt: levels.find((entry) => (entry.statuses['503'] ?? 0) > 0)?.writers ?? null,
  };
  await stack.stop();
  stack = undefined;
  console.log(`${RESULT_MARKER}${JSON.stringify(result)}`);
} catch (error) {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  exitCode = 1;
} finally {
  await stack?.stop().catch(() => undefined);
}
process.exit(exitCode);
