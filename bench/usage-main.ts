/**
 * What usage metering costs (issue 39), on the local stack behind the DynamoDB layer with its ledger
 * on (infra/local/dynamodb-semantics/ledger.ts):
 *
 * 1. The request path. One organization's reads and posts, one after another for `--seconds`, with
 *    the stream's workers held (what is written meanwhile is the requests' own): the units and
 *    DynamoDB requests per request, and the writes the function instances' flushes of metered
 *    usage added (the organization's `USAGE` partition), against the goal of none in a request's
 *    transaction and at most one write per function instance per flush interval.
 * 2. The usage query. 90 days of usage items (every shard of every day, and a stored-bytes change
 *    every tenth day) written for a fresh organization; `GET /api/usage` for that window, N times:
 *    read units per query (from the ledger) and latency.
 *
 * Phase 11 of `npm run bench`; standalone: `npx tsx bench/usage-main.ts [--seconds=25] [--queries=20]`.
 * Prints `@@RESULT <json>` (bench/usage-report.ts prints it).
 */
import { availableParallelism, loadavg } from 'node:os';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { readSemanticsConfig, startDynamoDbSemantics } from '../infra/local/dynamodb-semantics';
import type { Ledger } from '../infra/local/dynamodb-semantics/ledger';
import { startDynamoDb } from '../infra/local/emulators';
import { startLocalStack } from '../infra/local/stack';
import { RESULT_MARKER } from './protocol';
import { median } from './report';
import { quiet, send } from './tenant-ceiling-scenarios';
import type { UsageBenchResult } from './usage-report';

const USAGE = `Usage: npx tsx bench/usage-main.ts [--seconds=<s>] [--queries=<n>]

  --seconds=<s>  the request-path run (default 25: two and a half flush intervals of 10 s)
  --queries=<n>  GET /api/usage over 90 days, this many times (default 20)`;

const args = new Map(
  process.argv.slice(2).map((arg) => {
    const [name = '', value = ''] = arg.replace(/^--/, '').split('=');
    return [name, value] as const;
  }),
);
if (args.has('help')) {
  console.log(USAGE);
  process.exit(0);
}
const seconds = Number(args.get('seconds') ?? 25);
const queries = Number(args.get('queries') ?? 20);
if (!(seconds > 0) || !(queries > 0)) {
  console.error(`--seconds and --queries take positive numbers\n\n${USAGE}`);
  process.exit(2);
}

const say = (line: string) => console.error(`[bench] ${line}`);
const load1 = () => (loadavg()[0] ?? 0).toFixed(2);
const FLUSH_MS = 10_000;

/** Units and writes on partitions whose key matches `pattern`. */
function on(ledger: Ledger, pattern: RegExp) {
  const snapshot = ledger.snapshot();
  const matching = snapshot.partitions.filter(
    (partition) => partition.index === null && pattern.test(partition.key),
  );
  return {
    writeUnits: matching.reduce((sum, partition) => sum + partition.writeUnits, 0),
    readUnits: matching.reduce((sum, partition) => sum + partition.readUnits, 0),
    writes: matching.reduce((sum, partition) => sum + partition.writes, 0),
    transactions: snapshot.items
      .filter((item) => pattern.test(item.pk))
      .reduce((sum, item) => sum + item.transactions, 0),
    requests: Object.values(snapshot.requests).reduce((sum, count) => sum + count, 0),
    allWriteUnits: snapshot.partitions.reduce((sum, partition) => sum + partition.writeUnits, 0),
  };
}

say(`node ${process.version}, ${availableParallelism()} cores, load ${load1()}; starting DynamoDB Local…`);
const dynamodb = await startDynamoDb(undefined);
const layer = await startDynamoDbSemantics({
  upstream: dynamodb.endpoint,
  config: { ...readSemanticsConfig(process.env), ledger: 'charges' },
});
process.env.AWS_ENDPOINT_URL_DYNAMODB = layer.endpoint;
const stack = await startLocalStack({
  port: 0,
  seedDemo: true,
  env: {
    POWERTOOLS_LOG_LEVEL: 'ERROR',
    RATE_LIMIT_PER_MINUTE: '1000000',
    AUTH_CACHE_TTL_MS: '10000',
    USAGE_FLUSH_MS: String(FLUSH_MS),
  },
  progress: (line) => say(`  ${line}`),
});
try {
  const ledger = layer.ledger;
  const demo = stack.demo;
  if (!ledger || !demo) throw new Error('the bench needs the ledger and the demo organization');
  const base = stack.baseUrl;
  const usagePartition = new RegExp(`^ORG#${demo.organizationId}#USAGE$`);

  // ── 1. The request path ─────────────────────────────────────────────────────────────────────
  const created = await send(base, {
    method: 'POST',
    path: '/api/conversations',
    token: demo.apiKey,
    body: { visitorId: demo.visitorId, message: 'Where is my parcel?' },
  });
  const conversationId = String((created.body as { id?: string }).id);
  // Warm both functions: their cold starts are no part of the figure.
  await send(base, { method: 'GET', path: `/api/conversations/${conversationId}`, token: demo.apiKey });
  await quiet(ledger);
  // Past one interval: the warm-up's counts are written before the measured run starts.
  await new Promise((resolve) => setTimeout(resolve, FLUSH_MS + 1_000));
  await quiet(ledger);
  stack.pauseWorkers();
  ledger.reset();
  const startedAt = Date.now();
  let requests = 0;
  const statuses: Record<string, number> = {};
  while (Date.now() - startedAt < seconds * 1000) {
    const answer =
      requests % 2 === 0
        ? await send(base, {
            method: 'GET',
            path: `/api/conversations/${conversationId}`,
            token: demo.apiKey,
          })
        : await send(base, {
            method: 'POST',
            path: `/api/conversations/${conversationId}/messages`,
            token: demo.apiKey,
            body: { content: `Update ${requests}`, operatorId: demo.adminOperatorId },
          });
    statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
    requests++;
  }
  const elapsedMs = Date.now() - startedAt;
  // The instances' timers write what the last interval counted.
  await new Promise((resolve) => setTimeout(resolve, FLUSH_MS + 1_000));
  const path = on(ledger, usagePartition);
  stack.resumeWorkers();
  const functions = 2;
  const intervals = Math.ceil((elapsedMs + FLUSH_MS) / FLUSH_MS);
  const requestPath = {
    requests,
    statuses,
    seconds: Math.round(elapsedMs / 100) / 10,
    functions,
    flushIntervals: intervals,
    usageWrites: path.writes,
    usageTransactions: path.transactions,
    usageWriteUnits: path.writeUnits,
    usageWritesPerRequest: path.writes / requests,
    allowedWrites: functions * intervals,
    writeUnitsPerRequest: path.allWriteUnits / requests,
    usageShareOfWriteUnits: path.allWriteUnits ? path.writeUnits / path.allWriteUnits : 0,
  };
  say(
    `request path: ${requests} requests in ${requestPath.seconds} s (2 functions, ${intervals} intervals of ${FLUSH_MS / 1000} s): ${path.writes} usage writes in ${path.transactions} item-transactions (allowed ≤ ${requestPath.allowedWrites}), ${path.writeUnits} WCU of ${path.allWriteUnits.toFixed(1)} (${(requestPath.usageShareOfWriteUnits * 100).toFixed(1)} %)`,
  );

  // ── 2. The usage query over 90 days ─────────────────────────────────────────────────────────
  await quiet(ledger);
  const { db, tableName } = await import('../shared/db/client');
  const { keys } = await import('../shared/db/keys');
  const { USAGE_SHARDS } = await import('../shared/db/usage');
  const orgId = demo.organizationId;
  const today = new Date().toISOString().slice(0, 10);
  const dayBefore = (n: number) => new Date(Date.parse(today) - n * 86_400_000).toISOString().slice(0, 10);
  const items: Record<string, unknown>[] = [];
  for (let n = 1; n <= 90; n++) {
    const day = dayBefore(n);
    for (let shard = 0; shard < USAGE_SHARDS; shard++)
      items.push({
        ...keys.usageShard(orgId, day, shard),
        entity: 'usage',
        day,
        conv: 12,
        msg: 140,
        msgV: 71,
        notes: 4,
        events: 190,
        whA: 192,
        whS: 189,
        srch: 9,
        req: 612,
        req4: 7,
        rcu: 301.5,
        wcu: 1288,
      });
    if (n % 10 === 0)
      items.push({ ...keys.usageStored(orgId, day), entity: 'usage', day, storedDelta: 4096 });
  }
  for (let start = 0; start < items.length; start += 25)
    await db.send(
      new BatchWriteCommand({
        RequestItems: {
          [tableName]: items.slice(start, start + 25).map((Item) => ({ PutRequest: { Item } })),
        },
      }),
    );
  await quiet(ledger);
  const from = dayBefore(89);
  const to = new Date(Date.parse(today) + 86_400_000).toISOString().slice(0, 10);
  ledger.reset();
  const latencies: number[] = [];
  let bytes = 0;
  for (let i = 0; i < queries; i++) {
    const answer = await send(base, {
      method: 'GET',
      path: `/api/usage?from=${from}&to=${to}`,
      token: demo.apiKey,
    });
    if (answer.status !== 200)
      throw new Error(`GET /api/usage: ${answer.status} ${JSON.stringify(answer.body)}`);
    latencies.push(answer.ms);
    bytes = JSON.stringify(answer.body).length;
  }
  const read = on(ledger, usagePartition);
  const query = {
    days: 90,
    items: items.length,
    queries,
    readUnitsPerQuery: read.readUnits / queries,
    p50Ms: median(latencies),
    answerBytes: bytes,
  };
  say(
    `usage query, 90 days (${items.length} items): ${query.readUnitsPerQuery.toFixed(1)} RCU per query, p50 ${query.p50Ms.toFixed(1)} ms, answer ${Math.round(bytes / 1024)} KiB`,
  );
  const result: UsageBenchResult = { load: load1(), requestPath, query };
  console.log(`${RESULT_MARKER}${JSON.stringify(result)}`);
} finally {
  await stack.stop();
  await layer.close();
  await dynamodb.stop();
}
