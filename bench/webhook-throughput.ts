import { availableParallelism } from 'node:os';
import { INITIAL_QUEUE_POLLERS } from '../functions/workers';
import type { LocalStack } from '../infra/local/stack';
import type {
  BacklogDrain,
  Calibration,
  Component,
  MsDistribution,
  ReceiverReply,
  Stage,
  ThroughputResult,
  WhatIf,
} from './protocol';
import { percentile } from './report';
import {
  descendantsNamed,
  machineCpuMs,
  type Probe,
  type ProbeData,
  processCpuMs,
  type Span,
} from './webhook-probe';
import type { ReceiverHandle } from './webhook-receiver-handle';

export interface ThroughputOptions {
  stack: LocalStack;
  receiver: ReceiverHandle;
  probe: Probe;
  webhooks: number;
  conversations: number;
  parallel: number;
  /** From the first request: how long to wait for the last delivery before reporting a miss. */
  timeoutMs: number;
  /** A second, shorter run with this many delivery pollers in all; none when undefined. */
  whatIf: { pollers: number; conversations: number } | undefined;
  /** A third, shorter run under the sampling profiler; none when undefined. */
  profileConversations: number | undefined;
  log: (line: string) => void;
}

type Report = Extract<ReceiverReply, { type: 'report' }>;
interface Delivery {
  event: number;
  arrival: number;
  eventId: string;
  deliveryId: string;
}

/** Delivery pollers the local stack runs (Lambda's initial SQS concurrency). */
const POLLERS = INITIAL_QUEUE_POLLERS;

/** The what-if and profiled runs are shorter: a stuck one must not eat the bench's time. */
const SECONDARY_TIMEOUT_MS = 40_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const epochNow = () => performance.timeOrigin + performance.now();
const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
const mean = (values: readonly number[]) => (values.length > 0 ? sum(values) / values.length : Number.NaN);
const f1 = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : '—');
const f0 = (value: number) => (Number.isFinite(value) ? value.toFixed(0) : '—');
const pct = (part: number, whole: number) => (whole > 0 ? `${((part / whole) * 100).toFixed(0)}%` : '—');
const spanMs = (spans: readonly Span[]) => spans.map((span) => span.end - span.start);

export function distribution(values: readonly number[]): MsDistribution {
  const sorted = Float64Array.from(values.filter(Number.isFinite)).sort();
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length > 0 ? (sorted[sorted.length - 1] ?? Number.NaN) : Number.NaN,
  };
}

async function request(
  baseUrl: string,
  method: string,
  path: string,
  token: string,
  body: unknown,
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as unknown) : undefined };
}

/** Waits until the receiver has `count` requests; false at `deadline` or when nothing arrives for `stallMs`. */
async function waitForArrivals(
  receiver: ReceiverHandle,
  count: number,
  deadline: number,
  stallMs: number,
): Promise<boolean> {
  let last = -1;
  let lastChange = Date.now();
  while (Date.now() < deadline) {
    const seen = await receiver.count();
    if (seen >= count) return true;
    if (seen !== last) {
      last = seen;
      lastChange = Date.now();
    } else if (Date.now() - lastChange > stallMs) return false;
    await sleep(20);
  }
  return false;
}

/** Runs `total` tasks with at most `parallel` in flight. */
async function pool(total: number, parallel: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(parallel, total) }, async () => {
    while (next < total) {
      const index = next++;
      await task(index);
    }
  });
  await Promise.all(lanes);
}

/** Share of [from, to] during which more had been `added` than `removed`, and the peak difference. */
function backlog(added: number[], removed: number[], from: number, to: number) {
  const events = [...added.map((at) => ({ at, delta: 1 })), ...removed.map((at) => ({ at, delta: -1 }))].sort(
    (a, b) => a.at - b.at || a.delta - b.delta,
  );
  let depth = 0;
  let peak = 0;
  let busy = 0;
  let previous = from;
  for (const event of events) {
    const at = Math.min(Math.max(event.at, from), to);
    if (depth > 0) busy += at - previous;
    previous = at;
    depth += event.delta;
    peak = Math.max(peak, depth);
  }
  if (depth > 0) busy += to - previous;
  return { busyShare: to > from ? busy / (to - from) : 0, peak };
}

/** What one measured run saw. */
interface Run {
  expected: number;
  t0: number;
  createMs: number;
  complete: boolean;
  windowMs: number;
  data: ProbeData;
  report: Report;
  deliveries: Delivery[];
  distinct: number;
  cpuMs: number;
  elu: number;
  jvmMs: number | undefined;
  receiverCpuMs: number;
  machine: { busy: number; total: number } | undefined;
}

/**
 * (b) and (c): N webhooks of one organization subscribed to `conversation.created`, then
 * `conversations` conversations created through the API (a few in parallel): N × conversations
 * deliveries through stream → fan-out → SQS → delivery worker → the local receiver. Deliveries per
 * second from the first request to the last delivery received; latency per delivery from the
 * event's `timestamp` to its arrival; and where the time goes, per stage and per component.
 */
export async function measureThroughput(options: ThroughputOptions): Promise<ThroughputResult> {
  const { stack, receiver, probe, log } = options;
  const demo = stack.demo;
  if (!demo) throw new Error('the local stack was started without the demo seed');
  const { deliveryIdFor } = await import('../shared/db/deliveries');

  log(`registering ${options.webhooks} webhooks (conversation.created) at 127.0.0.1:${receiver.port}…`);
  const webhookByPath = new Map<string, string>();
  await pool(options.webhooks, 4, async (i) => {
    const path = `/hooks/${i}`;
    const created = await request(stack.baseUrl, 'POST', '/api/webhooks', demo.apiKey, {
      url: `http://127.0.0.1:${receiver.port}${path}`,
      events: ['conversation.created'],
    });
    const id = (created.body as { id?: unknown } | undefined)?.id;
    if (created.status !== 201 || typeof id !== 'string')
      throw new Error(`registering a webhook: ${created.status} ${JSON.stringify(created.body)}`);
    webhookByPath.set(path, id);
  });

  let sequence = 0;
  const createConversation = async () => {
    const number = ++sequence;
    const created = await request(stack.baseUrl, 'POST', '/api/conversations', demo.apiKey, {
      visitorId: demo.visitorId,
      message: `Hello, my order #${40_000 + number} has not arrived yet and the tracking page shows no update.`,
    });
    if (created.status !== 201)
      throw new Error(`creating a conversation: ${created.status} ${JSON.stringify(created.body)}`);
  };

  // Warm-up: every stage once (connections, JIT, the pollers' iterators), not measured.
  const warmupConversations = 2;
  log(
    `warm-up: ${warmupConversations} conversations → ${warmupConversations * options.webhooks} deliveries…`,
  );
  for (let i = 0; i < warmupConversations; i++) await createConversation();
  if (!(await waitForArrivals(receiver, warmupConversations * options.webhooks, Date.now() + 30_000, 15_000)))
    throw new Error(`warm-up: only ${await receiver.count()} deliveries arrived within 30 s`);
  await sleep(500);
  await receiver.reset();

  // Latency without a backlog: one conversation at a time, each waiting for its deliveries.
  const idleConversations = 3;
  log(
    `no backlog: ${idleConversations} conversations one at a time, each waiting for its ${options.webhooks} deliveries…`,
  );
  for (let i = 1; i <= idleConversations; i++) {
    await createConversation();
    if (!(await waitForArrivals(receiver, i * options.webhooks, Date.now() + 20_000, 10_000)))
      throw new Error(`no backlog: only ${await receiver.count()} deliveries arrived within 20 s`);
  }
  const idle = await receiver.report();
  const idleLatency = distribution(idle.atMs.map((at, i) => at - (idle.eventMs[i] ?? Number.NaN)));
  await sleep(300);
  await receiver.reset();

  const jvm = descendantsNamed(process.pid, 'java');
  const jvmCpu = () => (jvm.length > 0 ? sum(jvm.map((pid) => processCpuMs(pid) ?? 0)) : undefined);

  /**
   * `held`: the workers are paused while the conversations are created and released together, so
   * the window (and the CPU counted) is the pipeline draining a backlog of committed events, the
   * API's own pace left out. Otherwise the window runs from the first request.
   */
  const measuredRun = async (
    conversations: number,
    timeoutMs = options.timeoutMs,
    held = false,
  ): Promise<Run> => {
    const expected = options.webhooks * conversations;
    let heldCreateMs = 0;
    if (held) {
      stack.pauseWorkers();
      const created0 = epochNow();
      await pool(conversations, options.parallel, createConversation);
      heldCreateMs = epochNow() - created0;
      // Let the last commits reach the stream before the workers look.
      await sleep(500);
    }
    const cpu0 = process.cpuUsage();
    const jvm0 = jvmCpu();
    const machine0 = machineCpuMs();
    const elu0 = performance.eventLoopUtilization();
    const receiver0 = (await receiver.report()).cpuMs;
    probe.start();
    const t0 = epochNow();
    if (held) stack.resumeWorkers();
    else await pool(conversations, options.parallel, createConversation);
    const createMs = held ? heldCreateMs : epochNow() - t0;
    const complete = await waitForArrivals(receiver, expected, t0 + timeoutMs, 15_000);
    const waitedUntil = epochNow();
    const cpu = process.cpuUsage(cpu0);
    const jvm1 = jvmCpu();
    const machine1 = machineCpuMs();
    const elu = performance.eventLoopUtilization(elu0);
    // The last attempts' records land just after their arrival.
    await sleep(300);
    const data = probe.stop();
    const report = await receiver.report();
    await receiver.reset();
    const arrivals = report.atMs.length;
    const lastArrival = arrivals > 0 ? Math.max(...report.atMs) : waitedUntil;
    const pairs = new Set<string>();
    const deliveries: Delivery[] = [];
    for (let i = 0; i < arrivals; i++) {
      const eventId = report.webhookIds[i] ?? '';
      const webhookId = webhookByPath.get(report.paths[i] ?? '') ?? '';
      pairs.add(`${webhookId}/${eventId}`);
      deliveries.push({
        event: report.eventMs[i] ?? Number.NaN,
        arrival: report.atMs[i] ?? Number.NaN,
        eventId,
        deliveryId: webhookId ? deliveryIdFor(webhookId, eventId) : '',
      });
    }
    return {
      expected,
      t0,
      createMs,
      complete,
      windowMs: (complete ? lastArrival : waitedUntil) - t0,
      data,
      report,
      deliveries,
      distinct: pairs.size,
      cpuMs: (cpu.user + cpu.system) / 1000,
      elu: elu.utilization,
      jvmMs: jvm0 === undefined || jvm1 === undefined ? undefined : jvm1 - jvm0,
      receiverCpuMs: report.cpuMs - receiver0,
      machine:
        machine0 && machine1
          ? { busy: machine1.busy - machine0.busy, total: machine1.total - machine0.total }
          : undefined,
    };
  };

  const expected = options.webhooks * options.conversations;
  log(
    `creating ${options.conversations} conversations (${options.parallel} in parallel) → ${expected.toLocaleString('en')} deliveries…`,
  );
  const main = await measuredRun(options.conversations);
  const perSecond = main.distinct / (main.windowMs / 1000);
  log(
    `${main.distinct.toLocaleString('en')}/${expected.toLocaleString('en')} deliveries in ${(main.windowMs / 1000).toFixed(1)} s = ${f0(perSecond)}/s${main.complete ? '' : ' (incomplete)'}`,
  );
  const mainFigures = figuresOf(main);
  const analysis = analyse(main, mainFigures, options);
  const cpuPerDelivery = {
    service: mainFigures.cpu.service,
    dynamoDbLocal: mainFigures.cpu.dynamoDbLocal,
    receiver: mainFigures.cpu.receiver,
  };

  let backlogDrain: BacklogDrain | undefined;
  if (main.complete) {
    log(
      `backlog: workers held while ${options.conversations} conversations are created, then released → ${expected.toLocaleString('en')} deliveries…`,
    );
    const run = await measuredRun(options.conversations, options.timeoutMs, true);
    const figures = figuresOf(run);
    backlogDrain = {
      expected: run.expected,
      received: run.distinct,
      createMs: run.createMs,
      windowMs: run.windowMs,
      timedOut: !run.complete,
      perSecond: run.distinct / (run.windowMs / 1000),
      cpuPerDeliveryMs: figures.cpu.total,
      detail: `${describeProcesses(run)}; ${describeTable(run.data, 4)}`,
    };
    log(`backlog drained at ${f0(backlogDrain.perSecond)}/s`);
  }

  let whatIf: WhatIf | undefined;
  if (options.whatIf && main.complete) {
    whatIf = await withExtraPollers(stack, options.whatIf.pollers - POLLERS, async () => {
      const conversations = options.whatIf?.conversations ?? 0;
      log(
        `what-if: ${options.whatIf?.pollers} delivery pollers, ${conversations} conversations → ${(conversations * options.webhooks).toLocaleString('en')} deliveries…`,
      );
      const run = await measuredRun(conversations, SECONDARY_TIMEOUT_MS);
      const figures = figuresOf(run);
      return {
        pollers: options.whatIf?.pollers ?? 1,
        expected: run.expected,
        received: run.distinct,
        windowMs: run.windowMs,
        perSecond: figures.rate,
        detail: `fan-out ${f0(figures.fanoutRate)}/s (${f1(figures.perEventMs)} ms per event); the delivery queue held messages ${pct(figures.queue.busyShare, 1)} of the window (peak ${figures.queue.peak}); CPU per delivery ${f1(figures.cpu.total)} ms (service ${f1(figures.cpu.service)}, DynamoDB Local ${f1(figures.cpu.dynamoDbLocal ?? Number.NaN)}); ${describeProcesses(run)}; ${describeTable(run.data, 4)}`,
      };
    });
    log(`what-if: ${f0(whatIf.perSecond)}/s`);
  }

  let profile: ThroughputResult['profile'];
  const drained = main.complete && (!whatIf || whatIf.received === whatIf.expected);
  if (options.profileConversations && drained) {
    log(
      `profiling the service process (V8 sampling, 1 ms): ${options.profileConversations} conversations → ${options.profileConversations * options.webhooks} deliveries…`,
    );
    const { profiled } = await import('./webhook-profile');
    const conversations = options.profileConversations;
    const { result: run, shares } = await profiled(() => measuredRun(conversations, SECONDARY_TIMEOUT_MS));
    profile = { deliveries: run.distinct, windowMs: run.windowMs, shares: shares.slice(0, 12) };
  }

  log('calibrating DynamoDB Local alone (PutItem, then consistent GetItem, 10 in flight)…');
  const capacity = await calibrateTable(10, 1_500);
  const perDelivery = tableCallsPerDelivery(main);
  const calibration: Calibration = {
    concurrency: 10,
    ...capacity,
    ...perDelivery,
    ceilingPerSecond:
      1 /
      (perDelivery.writesPerDelivery / capacity.writesPerSecond +
        perDelivery.readsPerDelivery / capacity.readsPerSecond),
  };
  analysis.findings.push(
    `DynamoDB Local alone does ${f0(calibration.writesPerSecond)} writes/s and ${f0(calibration.readsPerSecond)} consistent reads/s here; the run cost ${calibration.writesPerDelivery.toFixed(2)} writes + ${calibration.readsPerDelivery.toFixed(2)} reads per delivery → at most ${f0(calibration.ceilingPerSecond)} deliveries/s through DynamoDB Local, whatever the pollers`,
  );
  if (whatIf)
    analysis.findings.push(
      `what-if, ${whatIf.pollers} delivery pollers instead of ${POLLERS}: ${f0(whatIf.perSecond)}/s (${whatIf.received}/${whatIf.expected} in ${(whatIf.windowMs / 1000).toFixed(1)} s): ${whatIf.detail}`,
    );

  return {
    webhooks: options.webhooks,
    conversations: options.conversations,
    parallel: options.parallel,
    expected,
    received: main.report.atMs.length,
    distinct: main.distinct,
    createMs: main.createMs,
    windowMs: main.windowMs,
    timedOut: !main.complete,
    perSecond,
    latency: distribution(main.deliveries.map((delivery) => delivery.arrival - delivery.event)),
    idleLatency,
    cpuPerDelivery,
    stages: stagesOf(main.data, main.deliveries),
    components: analysis.components,
    findings: analysis.findings,
    warmup: `${warmupConversations} conversations (${warmupConversations * options.webhooks} deliveries) first, not measured`,
    calibration,
    ...(backlogDrain ? { backlog: backlogDrain } : {}),
    ...(whatIf ? { whatIf } : {}),
    ...(profile ? { profile } : {}),
  };
}

/** Runs `body` with `extra` more delivery pollers on the queue, the same handler module as the stack's. */
async function withExtraPollers<T>(stack: LocalStack, extra: number, body: () => Promise<T>): Promise<T> {
  const { startQueueConsumer } = await import('../infra/local/consumers/queue-poller');
  const { handler } = await import('../functions/workers/webhook-delivery');
  const queueUrl = process.env.WEBHOOK_DELIVERY_QUEUE_URL;
  const endpoint = stack.endpoints.sqs;
  if (!queueUrl || !endpoint) throw new Error('no webhook delivery queue');
  const consumers = Array.from({ length: extra }, () =>
    startQueueConsumer({
      name: 'webhook-delivery',
      endpoint,
      queueUrl,
      queueArn: '',
      batchSize: 10,
      handler,
      onError: (error) => console.error('[bench what-if poller]', error),
    }),
  );
  try {
    return await body();
  } finally {
    await Promise.all(consumers.map((consumer) => consumer.stop()));
  }
}

/** Table writes and reads per delivery received in the run (everything the service sent). */
function tableCallsPerDelivery(run: Run): { writesPerDelivery: number; readsPerDelivery: number } {
  let writes = 0;
  let reads = 0;
  for (const [kind, durations] of run.data.dynamo) {
    if (/^(PutItem|UpdateItem|DeleteItem|TransactWriteItems|BatchWriteItem)/.test(kind))
      writes += durations.length;
    else reads += durations.length;
  }
  const count = Math.max(1, run.distinct);
  // The stream pollers' GetRecords read the table too (every poller reads every record).
  return { writesPerDelivery: writes / count, readsPerDelivery: (reads + run.data.allGetRecords) / count };
}

/** DynamoDB Local's throughput with nothing else running: PutItem of ~1 KB items, then consistent GetItem. */
async function calibrateTable(
  concurrency: number,
  durationMs: number,
): Promise<{ writesPerSecond: number; readsPerSecond: number }> {
  const { db, tableName } = await import('../shared/db/client');
  const { GetCommand, PutCommand } = await import('@aws-sdk/lib-dynamodb');
  const payload = 'x'.repeat(1_000);
  const prefix = `BENCH#CALIBRATION#${Date.now()}`;
  const measure = async (operation: (lane: number, i: number) => Promise<unknown>) => {
    let done = 0;
    const started = Date.now();
    const end = started + durationMs;
    await Promise.all(
      Array.from({ length: concurrency }, async (_, lane) => {
        for (let i = 0; Date.now() < end; i++) {
          await operation(lane, i);
          done += 1;
        }
      }),
    );
    return done / ((Date.now() - started) / 1000);
  };
  const writesPerSecond = await measure((lane, i) =>
    db.send(
      new PutCommand({
        TableName: tableName,
        Item: { pk: `${prefix}#${lane}`, sk: `ITEM#${i}`, entity: 'calibration', payload },
      }),
    ),
  );
  const readsPerSecond = await measure((lane, i) =>
    db.send(
      new GetCommand({
        TableName: tableName,
        Key: { pk: `${prefix}#${lane}`, sk: `ITEM#${i % 20}` },
        ConsistentRead: true,
      }),
    ),
  );
  return { writesPerSecond, readsPerSecond };
}

function stagesOf(data: ProbeData, deliveries: Delivery[]): Stage[] {
  const between = (from: (d: Delivery) => number | undefined, to: (d: Delivery) => number | undefined) =>
    distribution(
      deliveries.map((delivery) => {
        const a = from(delivery);
        const b = to(delivery);
        return a === undefined || b === undefined ? Number.NaN : b - a;
      }),
    );
  const event = (d: Delivery) => d.event;
  const read = (d: Delivery) => data.streamReadAt.get(d.eventId);
  const fanout = (d: Delivery) => data.fanoutAt.get(d.eventId);
  const queued = (d: Delivery) => data.queuedAt.get(d.deliveryId);
  const worker = (d: Delivery) => data.workerAt.get(d.deliveryId);
  const arrival = (d: Delivery) => d.arrival;
  const recorded = (d: Delivery) => data.recordedAt.get(d.deliveryId);
  return [
    {
      name: 'stream',
      what: 'event timestamp → the stream reader returned it (commit, poll sleep, previous read)',
      ms: between(event, read),
    },
    {
      name: 'fan-out wait',
      what: 'read → the fan-out starts on its batch (the previous batch still being fanned out)',
      ms: between(read, fanout),
    },
    {
      name: 'fan-out',
      what: 'BatchGetItem events ∥ Query webhooks per organization → SendMessageBatch of the jobs',
      ms: between(fanout, queued),
    },
    {
      name: 'SQS',
      what: 'queued → a delivery poller received it',
      ms: between(queued, worker),
    },
    {
      name: 'worker + POST',
      what: "BatchGetItem of the batch's webhooks, open the secret, sign, POST → arrival at the receiver",
      ms: between(worker, arrival),
    },
    {
      name: 'record',
      what: "arrival → the batch's BatchWriteItem (or a failure's own write) done",
      ms: between(arrival, recorded),
    },
  ];
}

function describeProcesses(run: Run): string {
  const cores = availableParallelism();
  const of = (ms: number | undefined) => (ms === undefined ? '?' : pct(ms, run.windowMs));
  const parts = [
    `service process ${of(run.cpuMs)} of a core (event loop ${pct(run.elu, 1)} busy)`,
    `DynamoDB Local ${of(run.jvmMs)}`,
    `receiver ${of(run.receiverCpuMs)}`,
  ];
  if (!run.machine) return parts.join(', ');
  const machineMs = (run.machine.busy / Math.max(1, run.machine.total)) * cores * run.windowMs;
  const others = machineMs - run.cpuMs - (run.jvmMs ?? 0) - run.receiverCpuMs;
  parts.push(`everything else ${of(Math.max(0, others))}`);
  return `machine ${pct(run.machine.busy, run.machine.total)} of ${cores} cores busy: ${parts.join(', ')}`;
}

function describeTable(data: ProbeData, top = 5): string {
  return [...data.dynamo]
    .sort((a, b) => sum(b[1]) - sum(a[1]))
    .slice(0, top)
    .map(([kind, durations]) => `${kind} ×${durations.length} ${f1(mean(durations))} ms`)
    .join('; ');
}

interface Figures {
  rate: number;
  events: number;
  queued: number;
  fanoutSpanMs: number;
  fanoutRate: number;
  perEventMs: number;
  /** The delivery poll loop (meaningful with one poller). */
  batch: number;
  receiveMs: number;
  handlerMs: number;
  deleteMs: number;
  cycleMs: number;
  capacity: number;
  queue: { busyShare: number; peak: number };
  cpu: { service: number; dynamoDbLocal: number | undefined; receiver: number; total: number };
}

function figuresOf(run: Run): Figures {
  const { data, t0, windowMs } = run;
  const fanoutStarts = [...data.fanoutAt.values()].filter((at) => at >= t0);
  const queued = [...data.queuedAt.values()].filter((at) => at >= t0);
  const firstFanout = fanoutStarts.length > 0 ? Math.min(...fanoutStarts) : t0;
  const fanoutSpanMs = queued.length > 0 ? Math.max(...queued) - firstFanout : 0;
  const receives = data.receives.filter((span) => span.start >= t0 && span.count > 0);
  const deletes = data.deletes.filter((span) => span.start >= t0);
  const handlerMs: number[] = [];
  for (const span of receives) {
    const deleted = deletes.find((candidate) => candidate.start >= span.end);
    if (deleted) handlerMs.push(deleted.start - span.end);
  }
  const batch = mean(receives.map((span) => span.count));
  const receiveMs = mean(spanMs(receives));
  const deleteMs = mean(spanMs(deletes));
  const cycleMs = receiveMs + mean(handlerMs) + deleteMs;
  const workerStarts = [...data.workerAt.values()].filter((at) => at >= t0);
  const count = Math.max(1, run.distinct);
  const cpu = {
    service: run.cpuMs / count,
    dynamoDbLocal: run.jvmMs === undefined ? undefined : run.jvmMs / count,
    receiver: run.receiverCpuMs / count,
  };
  return {
    rate: run.distinct / (windowMs / 1000),
    events: fanoutStarts.length,
    queued: queued.length,
    fanoutSpanMs,
    fanoutRate: fanoutSpanMs > 0 ? queued.length / (fanoutSpanMs / 1000) : Number.NaN,
    perEventMs: fanoutSpanMs / Math.max(1, fanoutStarts.length),
    batch,
    receiveMs,
    handlerMs: mean(handlerMs),
    deleteMs,
    cycleMs,
    capacity: (POLLERS * batch) / (cycleMs / 1000),
    queue: backlog(queued, workerStarts, t0, t0 + windowMs),
    cpu: { ...cpu, total: cpu.service + (cpu.dynamoDbLocal ?? 0) + cpu.receiver },
  };
}

function analyse(
  run: Run,
  figures: Figures,
  options: ThroughputOptions,
): { components: Component[]; findings: string[] } {
  const { data, t0, windowMs } = run;
  const components: Component[] = [];
  const findings: string[] = [];
  const cores = availableParallelism();
  const durations = (kind: string) => data.dynamo.get(kind) ?? [];

  components.push({ name: 'CPU (share of one core unless said)', detail: describeProcesses(run) });

  // ── Stream poller and fan-out ──
  const reads = data.getRecords.filter((span) => span.start >= t0);
  const withRecords = reads.filter((span) => span.count > 0);
  const gaps: number[] = [];
  for (let i = 1; i < reads.length; i++) {
    const previous = reads[i - 1];
    const current = reads[i];
    if (previous && current) gaps.push(current.start - previous.end);
  }
  const getRecordsMs = sum(spanMs(reads));
  components.push({
    name: 'stream poller (fan-out)',
    detail: `${data.streamAttribution}: ${reads.length} GetRecords, ${f1(mean(spanMs(reads)))} ms each (${withRecords.length} with records, ${f0(mean(withRecords.map((span) => span.count)))} records each: every table write, filtered after reading); ${f0(mean(gaps))} ms from one to the next (at once after a read that returned records, else a 200 ms poll sleep); one reader serves every stream worker locally`,
  });
  components.push({
    name: 'fan-out',
    detail: `${figures.events} events (conversation.created + message.created), ${figures.queued} deliveries queued in ${f0(figures.fanoutSpanMs)} ms = ${f0(figures.fanoutRate)}/s; per batch of events: BatchGetItem ${f1(mean(durations('BatchGetItem events (fan-out)')))} ms ∥ Query webhooks ${f1(mean(durations('Query webhooks (fan-out)')))} ms, then SendMessageBatch ×${f1(mean(data.sends.filter((span) => span.start >= t0).map((span) => span.count)))} jobs, 16 calls in flight`,
  });

  // ── SQS and the delivery poller ──
  const receives = data.receives.filter((span) => span.start >= t0);
  const sends = data.sends.filter((span) => span.start >= t0);
  const deletes = data.deletes.filter((span) => span.start >= t0);
  components.push({
    name: 'SQS emulator (fauxqs, in-process)',
    detail: `SendMessageBatch ×${sends.length} ${f1(mean(spanMs(sends)))} ms; ReceiveMessage ×${receives.length} ${f1(figures.receiveMs)} ms when it returns messages; DeleteMessageBatch ×${deletes.length} ${f1(figures.deleteMs)} ms`,
  });
  components.push({
    name: 'delivery pollers + worker',
    detail: `${receives.filter((span) => span.count > 0).length} batches of ${f1(figures.batch)} over ${POLLERS} pollers; cycle = receive ${f1(figures.receiveMs)} + handler ${f1(figures.handlerMs)} + delete ${f1(figures.deleteMs)} = ${f1(figures.cycleMs)} ms → at most ${f0(figures.capacity)} deliveries/s; the queue held messages ${pct(figures.queue.busyShare, 1)} of the window (peak ${figures.queue.peak})`,
  });
  components.push({ name: 'DynamoDB calls (as the service saw them)', detail: describeTable(data, 6) });
  if (data.failedAttempts > 0)
    findings.push(`${data.failedAttempts} attempts were recorded as not succeeded`);
  if (run.distinct < run.report.atMs.length)
    findings.push(`${run.report.atMs.length - run.distinct} duplicate deliveries arrived`);

  // ── What bounds the rate ──
  const apiRate = options.conversations / (run.createMs / 1000);
  findings.push(
    `offered: ${options.conversations} conversations in ${f0(run.createMs)} ms = ${f0(apiRate)}/s → ${f0(apiRate * options.webhooks)} deliveries/s; fan-out ${f0(figures.fanoutRate)}/s; delivery worker ≤ ${f0(figures.capacity)}/s; end to end ${f0(figures.rate)}/s`,
  );
  if (figures.queue.busyShare > 0.6 && figures.capacity <= figures.fanoutRate * 1.1)
    findings.push(
      `narrowest stage: the delivery worker, ${POLLERS} pollers: ${f1(figures.batch)} messages per ${f0(figures.cycleMs)} ms cycle each; the queue was never empty for ${pct(figures.queue.busyShare, 1)} of the window`,
    );
  else if (figures.fanoutRate <= figures.capacity)
    findings.push(
      `narrowest stage: the fan-out, ${f0(figures.fanoutRate)}/s; the worker kept up (queue non-empty ${pct(figures.queue.busyShare, 1)} of the window)`,
    );
  const readMs = mean(durations('BatchGetItem webhooks (worker)'));
  const recordMs = mean(durations('BatchWriteItem deliveries (worker records successes)'));
  const sqsMs = figures.receiveMs + figures.deleteMs;
  findings.push(
    `time per worker cycle: SQS emulator ${f1(sqsMs)} ms (${pct(sqsMs, figures.cycleMs)}: receive + delete), handler ${f1(figures.handlerMs)} ms (${pct(figures.handlerMs, figures.cycleMs)}); per batch the handler waits on DynamoDB: BatchGetItem webhooks ${f1(readMs)} ms + BatchWriteItem records ${f1(recordMs)} ms, against received → arrival ${f1(stageP50(run, 'worker'))} ms (p50); the batch ends with its slowest message`,
  );
  findings.push(
    `stream reader: GetRecords ${f0(getRecordsMs)} ms in all (${pct(getRecordsMs, windowMs)} of the window); records then wait for the fan-out of the previous batch: fan-out wait p50 ${f0(stageP50(run, 'fan-out wait'))} ms`,
  );
  if (run.machine && run.machine.busy / run.machine.total > 0.85)
    findings.push(
      `the machine is saturated (${pct(run.machine.busy, run.machine.total)} of ${cores} cores busy, DynamoDB Local ${run.jvmMs === undefined ? '?' : pct(run.jvmMs, windowMs)} of a core): every table call above is slow because DynamoDB Local and the service process share ${cores} cores`,
    );
  findings.push(
    `CPU per delivery: service process ${f1(figures.cpu.service)} ms + DynamoDB Local ${figures.cpu.dynamoDbLocal === undefined ? '?' : f1(figures.cpu.dynamoDbLocal)} ms + receiver ${f1(figures.cpu.receiver)} ms = ${f1(figures.cpu.total)} ms: ${cores} cores allow about ${f0((cores * 1000) / figures.cpu.total)} deliveries/s at that cost; 2,000/s would take about ${f0((2000 * figures.cpu.total) / 1000)} cores`,
  );
  return { components, findings };
}

/** A stage's p50 in the run, by the start of its name. */
function stageP50(run: Run, name: string): number {
  return (
    stagesOf(run.data, run.deliveries).find((stage) => stage.name.startsWith(name))?.ms.p50 ?? Number.NaN
  );
}
