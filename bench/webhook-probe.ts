import { readdirSync, readFileSync } from 'node:fs';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { SQSClient } from '@aws-sdk/client-sqs';

/**
 * Phase 5's instruments on the in-process pipeline, none of which changes what it does: timestamps
 * per event and per delivery at each hand-over (stream read, fan-out, queue, worker, record), and
 * the duration of every call the stream poller, the fan-out, SQS and the worker make. The SQS and
 * DynamoDB Streams clients are private to their modules, so `send` is wrapped on their prototypes
 * (for as long as the probe is installed); the table client gets a middleware, like phase 4's.
 */

/** A call: when it started and ended (epoch ms), and how many items it carried. */
export interface Span {
  start: number;
  end: number;
  count: number;
}

export interface ProbeData {
  /** Event id → when the fan-out's stream poller read it (end of that GetRecords). */
  streamReadAt: Map<string, number>;
  /** Event id → when the fan-out started on it (its batch's BatchGetItem of the events). */
  fanoutAt: Map<string, number>;
  /** Delivery id → when the fan-out's PutItem of it ended. */
  createdAt: Map<string, number>;
  /** Delivery id → when its SendMessage ended (queued). */
  queuedAt: Map<string, number>;
  /** Delivery id → when a delivery poller received it (the worker starts on it then). */
  workerAt: Map<string, number>;
  /** Delivery id → when that GetItem ended (the webhook's, in parallel, ends about then too). */
  workerReadAt: Map<string, number>;
  /** Delivery id → when its attempt was recorded (UpdateItem ended), and whether it succeeded. */
  recordedAt: Map<string, number>;
  failedAttempts: number;
  /** The fan-out's GetRecords calls (count = records returned). */
  getRecords: Span[];
  /** Every stream poller's GetRecords: which poller (in order of creation), and the events returned. */
  streamReads: (Span & { client: number; eventIds: string[] })[];
  /** How the fan-out's poller was told apart from the others, and how consistently. */
  streamAttribution: string;
  /** Every stream poller's GetRecords calls (the other stream consumers too). */
  allGetRecords: number;
  /** The delivery queue: ReceiveMessage (count = messages), DeleteMessageBatch, SendMessage. */
  receives: Span[];
  deletes: Span[];
  sends: Span[];
  /** DynamoDB commands by what sent them (from their keys), with durations. */
  dynamo: Map<string, number[]>;
}

type Sendable = { send: (command: unknown, ...rest: unknown[]) => Promise<unknown> };

const now = () => performance.timeOrigin + performance.now();

/** A string attribute as the DocumentClient passes it, or marshalled (`{ S }`). */
function text(value: unknown): string {
  if (typeof value === 'string') return value;
  const marshalled = (value as { S?: unknown } | undefined)?.S;
  return typeof marshalled === 'string' ? marshalled : '';
}

function nameOf(command: unknown): string {
  const name = (command as { constructor?: { name?: string } } | undefined)?.constructor?.name ?? '';
  return name.replace(/Command$/, '');
}

const inputOf = (command: unknown): Record<string, unknown> =>
  ((command as { input?: unknown } | undefined)?.input ?? {}) as Record<string, unknown>;

export class Probe {
  data: ProbeData = Probe.empty();
  private active = false;
  private readonly restores: (() => void)[] = [];
  /** Stream clients in the order of their first call: the order startWorkers creates them. */
  private readonly streamClients: object[] = [];

  constructor(
    /** Which stream client (by order of creation) is the fan-out's. */
    private readonly fanoutStreamIndex: number,
  ) {}

  static empty(): ProbeData {
    return {
      streamReadAt: new Map(),
      fanoutAt: new Map(),
      createdAt: new Map(),
      queuedAt: new Map(),
      workerAt: new Map(),
      workerReadAt: new Map(),
      recordedAt: new Map(),
      failedAttempts: 0,
      getRecords: [],
      streamReads: [],
      streamAttribution: 'no stream reads',
      allGetRecords: 0,
      receives: [],
      deletes: [],
      sends: [],
      dynamo: new Map(),
    };
  }

  /** Before the stack starts: the stream pollers are told apart by the order of their first call. */
  wrapClients(deliveryQueueUrl: () => string | undefined): void {
    this.wrap(
      DynamoDBStreamsClient.prototype,
      (client, command, start, end, output) => {
        if (!this.active || nameOf(command) !== 'GetRecords') return;
        this.data.allGetRecords += 1;
        type Records = { Records?: { dynamodb?: { Keys?: { sk?: { S?: string } } } }[] } | undefined;
        const records = (output as Records)?.Records ?? [];
        const eventIds: string[] = [];
        for (const record of records) {
          const sk = record.dynamodb?.Keys?.sk?.S ?? '';
          if (sk.startsWith('EVENT#')) eventIds.push(sk.slice(6));
        }
        const index = this.streamClients.indexOf(client);
        this.data.streamReads.push({ client: index, start, end, count: records.length, eventIds });
      },
      // At call time: the pollers' loops make their first call as they are created, in order.
      (client) => {
        if (!this.streamClients.includes(client)) this.streamClients.push(client);
      },
    );
    this.wrap(SQSClient.prototype, (_client, command, start, end, output) => {
      if (!this.active) return;
      const input = inputOf(command);
      if (input.QueueUrl !== deliveryQueueUrl()) return;
      switch (nameOf(command)) {
        case 'ReceiveMessage': {
          const messages = (output as { Messages?: { Body?: string }[] } | undefined)?.Messages ?? [];
          this.data.receives.push({ start, end, count: messages.length });
          for (const message of messages) {
            const job = JSON.parse(message.Body ?? '{}') as { deliveryId?: string };
            if (job.deliveryId && !this.data.workerAt.has(job.deliveryId))
              this.data.workerAt.set(job.deliveryId, end);
          }
          break;
        }
        case 'SendMessageBatch': {
          const entries = (input.Entries as { MessageBody?: string }[] | undefined) ?? [];
          this.data.sends.push({ start, end, count: entries.length });
          for (const entry of entries) {
            const job = JSON.parse(entry.MessageBody ?? '{}') as { deliveryId?: string; notBefore?: string };
            if (job.deliveryId && !job.notBefore && !this.data.queuedAt.has(job.deliveryId))
              this.data.queuedAt.set(job.deliveryId, end);
          }
          break;
        }
        case 'DeleteMessageBatch':
          this.data.deletes.push({
            start,
            end,
            count: (input.Entries as unknown[] | undefined)?.length ?? 0,
          });
          break;
        case 'SendMessage': {
          this.data.sends.push({ start, end, count: 1 });
          const body = typeof input.MessageBody === 'string' ? input.MessageBody : '{}';
          const job = JSON.parse(body) as { deliveryId?: string; manual?: boolean; notBefore?: string };
          if (job.deliveryId && !job.notBefore && !this.data.queuedAt.has(job.deliveryId))
            this.data.queuedAt.set(job.deliveryId, end);
          break;
        }
      }
    });
  }

  /** After the stack starts (the table client reads its configuration at import). */
  instrumentTable(dynamo: DynamoDBClient): void {
    const name = 'benchWebhookProbe';
    dynamo.middlewareStack.add(
      (next, context) => async (args) => {
        if (!this.active) return next(args);
        const start = now();
        const result = await next(args);
        const operation = (context.commandName ?? 'unknown').replace(/Command$/, '');
        this.onTable(operation, args.input as unknown as Record<string, unknown>, start, now());
        return result;
      },
      { step: 'initialize', priority: 'high', name },
    );
    this.restores.push(() => dynamo.middlewareStack.remove(name));
  }

  start(): void {
    this.data = Probe.empty();
    this.active = true;
  }

  stop(): ProbeData {
    this.active = false;
    this.attributeStream();
    return this.data;
  }

  /**
   * Which stream poller is the fan-out's. By order of creation (startWorkers creates them in
   * workerDefinitions order), checked against what only the fan-out's poller does: it calls
   * GetRecords again only once the fan-out has started on every event of the previous call. Should
   * the order not hold, the poller that does this most consistently is taken, and the note says so.
   */
  private attributeStream(): void {
    const reads = this.data.streamReads;
    const clients = [...new Set(reads.map((read) => read.client))];
    const consistency = (client: number): number => {
      const mine = reads.filter((read) => read.client === client).sort((a, b) => a.start - b.start);
      const seen = new Set<string>();
      let total = 0;
      let consistent = 0;
      mine.forEach((read, k) => {
        const next = mine[k + 1]?.start ?? Number.POSITIVE_INFINITY;
        for (const id of read.eventIds) {
          const fanout = this.data.fanoutAt.get(id);
          if (seen.has(id) || fanout === undefined) continue;
          seen.add(id);
          total += 1;
          if (fanout >= read.end - 1 && fanout <= next) consistent += 1;
        }
      });
      return total > 0 ? consistent / total : 0;
    };
    const scores = new Map(clients.map((client) => [client, consistency(client)]));
    const byOrder = scores.get(this.fanoutStreamIndex) ?? 0;
    let chosen = this.fanoutStreamIndex;
    if (clients.length === 1 && clients[0] === chosen) {
      // One reader for every stream worker: its reads are the fan-out's, which no longer gates them.
      this.data.streamAttribution = 'the one stream reader (it serves every stream worker)';
    } else if (byOrder >= 0.98) {
      this.data.streamAttribution = `the fan-out's poller by creation order (#${chosen + 1} of ${clients.length}), consistent for ${(byOrder * 100).toFixed(0)}% of its events`;
    } else {
      const best = [...scores].sort((a, b) => b[1] - a[1])[0];
      chosen = best && best[1] >= 0.9 ? best[0] : -1;
      this.data.streamAttribution =
        chosen >= 0
          ? `creation order did not hold (${(byOrder * 100).toFixed(0)}% consistent): took poller #${chosen + 1}, consistent for ${((best?.[1] ?? 0) * 100).toFixed(0)}%`
          : `the fan-out's poller could not be told apart (best ${((best?.[1] ?? 0) * 100).toFixed(0)}% consistent): stream stages not attributed`;
    }
    for (const read of reads) {
      if (read.client !== chosen) continue;
      this.data.getRecords.push({ start: read.start, end: read.end, count: read.count });
      for (const id of read.eventIds)
        if (!this.data.streamReadAt.has(id)) this.data.streamReadAt.set(id, read.end);
    }
  }

  uninstall(): void {
    this.active = false;
    for (const restore of this.restores.splice(0).reverse()) restore();
  }

  /** Names a successful table call by what sent it (from its keys) and stamps the hand-overs it marks. */
  private onTable(operation: string, input: Record<string, unknown>, start: number, end: number): void {
    const sk = text((input.Key as { sk?: unknown } | undefined)?.sk);
    const item = (input.Item ?? {}) as Record<string, unknown>;
    const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
    let kind = `${operation} (other: auth, rate limit, conversation…)`;
    const batchKeys = Object.values(
      (input.RequestItems ?? {}) as Record<string, { Keys?: { sk?: unknown }[] }>,
    )
      .flatMap((request) => request.Keys ?? [])
      .map((key) => text(key.sk));
    const batchItems = Object.values(
      (input.RequestItems ?? {}) as Record<string, { PutRequest?: { Item?: Record<string, unknown> } }[]>,
    )
      .flat()
      .map((request) => request.PutRequest?.Item ?? {});
    if (operation === 'TransactWriteItems') kind = 'TransactWriteItems (API writes)';
    else if (operation === 'BatchGetItem' && batchKeys.some((key) => key.startsWith('EVENT#'))) {
      kind = 'BatchGetItem events (fan-out)';
      for (const key of batchKeys)
        if (key.startsWith('EVENT#') && !this.data.fanoutAt.has(key.slice(6)))
          this.data.fanoutAt.set(key.slice(6), start);
    } else if (operation === 'BatchGetItem' && batchKeys.some((key) => key.startsWith('WEBHOOK#')))
      kind = 'BatchGetItem webhooks (worker)';
    else if (
      operation === 'BatchWriteItem' &&
      batchItems.some((written) => text(written.entity) === 'delivery')
    ) {
      kind = 'BatchWriteItem deliveries (worker records successes)';
      for (const written of batchItems) this.data.recordedAt.set(text(written.id), end);
    } else if (operation === 'PutItem' && text(item.entity) === 'delivery') {
      kind = 'PutItem delivery (a failed first attempt)';
      this.data.recordedAt.set(text(item.id), end);
      if (text(item.status) !== 'succeeded') this.data.failedAttempts += 1;
    } else if (operation === 'UpdateItem' && sk.startsWith('DELIVERY#')) {
      kind = 'UpdateItem delivery (worker records a retry)';
      this.data.recordedAt.set(sk.slice(9), end);
      if (text(values[':status']) !== 'succeeded') this.data.failedAttempts += 1;
    } else if (operation === 'Query' && text(values[':pk']).endsWith('#WEBHOOKS'))
      kind = 'Query webhooks (fan-out)';
    else if (operation === 'GetItem' && sk.startsWith('DELIVERY#'))
      kind = 'GetItem delivery (worker, retries)';
    const durations = this.data.dynamo.get(kind) ?? [];
    durations.push(end - start);
    this.data.dynamo.set(kind, durations);
  }

  /** Wraps `send` of a client class; `before` sees every call as it is made, `observe` every call that resolved. */
  private wrap(
    prototype: object,
    observe: (client: object, command: unknown, start: number, end: number, output: unknown) => void,
    before?: (client: object) => void,
  ): void {
    const target = prototype as Sendable;
    const own = Object.hasOwn(prototype, 'send');
    const original = target.send;
    target.send = async function (this: object, command: unknown, ...rest: unknown[]) {
      before?.(this);
      const start = now();
      const output = await original.call(this, command, ...rest);
      observe(this, command, start, now(), output);
      return output;
    };
    this.restores.push(() => {
      if (own) target.send = original;
      else Reflect.deleteProperty(target, 'send');
    });
  }
}

/** CPU seconds (user + system) of a process from /proc, or undefined off Linux. */
export function processCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime), in clock ticks: 100 per second on Linux.
    return ((Number(fields[11]) || 0) + (Number(fields[12]) || 0)) * 10;
  } catch {
    return undefined;
  }
}

/** Busy and total CPU ms of the whole machine (all cores) from /proc/stat, or undefined off Linux. */
export function machineCpuMs(): { busy: number; total: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    // user nice system idle iowait irq softirq steal (guest time is already counted in user).
    const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = ticks.reduce((sum, value) => sum + (value || 0), 0);
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    return { busy: (total - idle) * 10, total: total * 10 };
  } catch {
    return undefined;
  }
}

/** Descendant processes of `root` whose command is `name` (e.g. DynamoDB Local's `java`). */
export function descendantsNamed(root: number, name: string): number[] {
  const parents = new Map<number, number>();
  const names = new Map<number, string>();
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return [];
  }
  for (const entry of entries) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const open = stat.indexOf('(');
      const close = stat.lastIndexOf(')');
      names.set(Number(entry), stat.slice(open + 1, close));
      parents.set(Number(entry), Number(stat.slice(close + 2).split(' ')[1]));
    } catch {
      // The process ended meanwhile.
    }
  }
  const isDescendant = (pid: number): boolean => {
    for (let parent = parents.get(pid); parent !== undefined && parent > 1; parent = parents.get(parent))
      if (parent === root) return true;
    return false;
  };
  return [...names].filter(([pid, comm]) => comm === name && isDescendant(pid)).map(([pid]) => pid);
}
