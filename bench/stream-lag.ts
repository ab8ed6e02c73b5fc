/**
 * Stream lag (issue 37): how long after a write commits integrators see it through the table's
 * stream, on the local stack (every worker running, as `npm start` runs them). Three kinds, one
 * after another, each with a few lanes (one conversation each) writing one at a time, each write
 * after a random pause (`--jitter`) so that writes do not fall in step with the stream reader's poll:
 *
 * 1. webhook: a message posted with an API key → its `message.created` delivery arrives at a local
 *    receiver. Lag = arrival − the message's `createdAt` (stamped just before the commit).
 * 2. realtime: a message edited with the API key → the `message_edited` notice arrives on an
 *    operator's WebSocket. Lag = arrival − the edit's `editedAt` (stamped just before the commit).
 * 3. search: a message with a word of its own posted → `GET /api/conversations/search?q=<word>`
 *    polled every 50 ms until it finds it (as bench/search-main.ts, "index lag"). Lag = the
 *    answer that found it received − `createdAt`.
 *
 * The receiver and the WebSocket client live in a child process (this file again, `--observer`):
 * the stack's gateway and stream reader run on this process's event loop, and an arrival must not
 * wait for them to be noticed. Arrival instants are epoch ms taken there, on the same clock as the
 * functions' timestamps.
 *
 * Prints progress, a table (p50 / p99 / max per kind), load averages and `@@RESULT <json>`.
 * `npx tsx bench/stream-lag.ts --help` lists the options.
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { createServer } from 'node:http';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import type { LocalStack } from '../infra/local/stack';
import type { MsDistribution } from './protocol';
import { distribution } from './report';

const USAGE = `Usage: npx tsx bench/stream-lag.ts [options]

Lag from a write's commit to what integrators see through the table's stream, on the local stack:
webhook delivered, realtime notice pushed to an operator, message searchable. Starts its own local
stack (≈ 30 s with the defaults, ≈ 1 minute with --samples=100).

Options:
  --samples=<n>     measured samples per kind (default 30), after one unmeasured write per lane
  --parallel=<n>    lanes per kind, each writing one at a time (default 3; at 4 requests in flight
                    the local workers yield to the API, which would be measured too)
  --jitter=<ms>     a random pause of 0 to <ms> before each measured write (default 300; 0: none,
                    and each lane's writes then fall just after the stream reader's poll)
  --kinds=<k>[,…]   only these kinds: webhook, realtime, search (default all three)
  --help            this text`;

const RESULT_MARKER = '@@RESULT ';
const KINDS = ['webhook', 'realtime', 'search'] as const;
type Kind = (typeof KINDS)[number];
/** What each lag is measured from and to, as printed and in the result. */
const MEASURES: Record<Kind, string> = {
  webhook: "message's createdAt → its message.created delivery received (webhook-id = event id)",
  realtime:
    "edit's editedAt (from the PATCH's answer) → its message_edited notice received on the operator's WebSocket",
  search: "message's createdAt → the search answer that first finds its word received (polled every 50 ms)",
};
/** A sample not seen within this counts as lost (and is not in the figures). */
const SAMPLE_TIMEOUT_MS = 30_000;
const SEARCH_POLL_MS = 50;
/** Edits are allowed for 5 minutes after a post: a lane posts a new message to edit well before. */
const EDIT_TARGET_MAX_AGE_MS = 4 * 60_000;

// ── The observer: webhook receiver and WebSocket client, in a process of their own ──────────────────

/** Parent → observer. */
type ObserverRequest = { type: 'connect'; url: string };
/** Observer → parent. */
type ObserverReport =
  | { type: 'listening'; port: number }
  | { type: 'connected' }
  | { type: 'connect-failed'; error: string }
  | { type: 'arrival'; key: string; at: number };

/** Arrival keys: a delivery by its event type and message id, a notice by its message id and editedAt. */
const webhookKey = (eventType: string, messageId: string) => `webhook ${eventType} ${messageId}`;
const noticeKey = (noticeType: string, messageId: string, editedAt: string) =>
  `notice ${noticeType} ${messageId} ${editedAt}`;

const epochNow = () => performance.timeOrigin + performance.now();

function runObserver(): void {
  const report = (message: ObserverReport) => process.send?.(message);
  const server = createServer({ keepAlive: true }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      // The instant the whole delivery is in: what an integrator's endpoint could act on.
      const at = epochNow();
      response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok');
      try {
        const payload = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          type?: unknown;
          data?: { id?: unknown };
        };
        if (typeof payload.type === 'string' && typeof payload.data?.id === 'string')
          report({ type: 'arrival', key: webhookKey(payload.type, payload.data.id), at });
      } catch {
        // Not a delivery of ours: nothing to match.
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  let socket: WebSocket | undefined;
  process.on('message', (request: ObserverRequest) => {
    if (request.type !== 'connect') return;
    socket = new WebSocket(request.url);
    socket.on('message', (data) => {
      const at = epochNow();
      try {
        const notice = JSON.parse(String(data)) as {
          type?: unknown;
          payload?: { message?: { id?: unknown; editedAt?: unknown } };
        };
        const message = notice.payload?.message;
        if (
          typeof notice.type === 'string' &&
          typeof message?.id === 'string' &&
          typeof message.editedAt === 'string'
        )
          report({ type: 'arrival', key: noticeKey(notice.type, message.id, message.editedAt), at });
      } catch {
        // Not JSON: not a notice.
      }
    });
    socket.once('open', () => report({ type: 'connected' }));
    socket.once('error', (error) => report({ type: 'connect-failed', error: error.message }));
    socket.once('unexpected-response', (_request, response) =>
      report({ type: 'connect-failed', error: `refused with ${response.statusCode}` }),
    );
  });
  process.on('disconnect', () => {
    socket?.terminate();
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    report({ type: 'listening', port: typeof address === 'object' && address ? address.port : 0 });
  });
}

interface Observer {
  port: number;
  /** Connects the WebSocket client; rejects when the handshake is refused. */
  connect(url: string): Promise<void>;
  /** The arrival instant of `key` (at once if it is in already); undefined after `timeoutMs`. */
  arrival(key: string, timeoutMs: number): Promise<number | undefined>;
  close(): void;
}

async function startObserver(): Promise<Observer> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--observer'], {
    execArgv: ['--no-warnings', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  // Should this process die without closing it, the observer must not outlive it.
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  const arrivals = new Map<string, number>();
  const waiting = new Map<string, (at: number) => void>();
  let onControl: ((report: ObserverReport) => void) | undefined;
  child.on('message', (report: ObserverReport) => {
    if (report.type === 'arrival') {
      // The first arrival counts (a redelivery is not a new one).
      if (!arrivals.has(report.key)) arrivals.set(report.key, report.at);
      waiting.get(report.key)?.(report.at);
    } else onControl?.(report);
  });
  const control = <T extends ObserverReport['type']>(types: readonly T[], ms: number) =>
    new Promise<Extract<ObserverReport, { type: T }>>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the observer sent no ${types.join('/')} in ${ms} ms`)),
        ms,
      );
      onControl = (report) => {
        if (!(types as readonly string[]).includes(report.type)) return;
        clearTimeout(timer);
        onControl = undefined;
        resolve(report as Extract<ObserverReport, { type: T }>);
      };
    });
  const listening = await control(['listening'], 20_000);
  return {
    port: listening.port,
    connect: async (url) => {
      const answer = control(['connected', 'connect-failed'], 15_000);
      child.send({ type: 'connect', url } satisfies ObserverRequest);
      const report = await answer;
      if (report.type === 'connect-failed') throw new Error(`realtime connection: ${report.error}`);
    },
    arrival: (key, timeoutMs) => {
      const known = arrivals.get(key);
      if (known !== undefined) return Promise.resolve(known);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waiting.delete(key);
          resolve(undefined);
        }, timeoutMs);
        waiting.set(key, (at) => {
          clearTimeout(timer);
          waiting.delete(key);
          resolve(at);
        });
      });
    },
    close: () => {
      process.off('exit', kill);
      child.disconnect();
    },
  };
}

// ── Options ──────────────────────────────────────────────────────────────────────────────────────────

interface Options {
  samples: number;
  parallel: number;
  jitterMs: number;
  kinds: Kind[];
}

function parse(argv: readonly string[]): Options | { error: string } | 'help' {
  const options: Options = { samples: 30, parallel: 3, jitterMs: 300, kinds: [...KINDS] };
  for (const arg of argv) {
    const [name = '', value = ''] = arg.includes('=')
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg];
    const whole = Number(value.replaceAll('_', ''));
    switch (name) {
      case '--help':
      case '-h':
        return 'help';
      case '--samples':
        if (!Number.isInteger(whole) || whole < 1) return { error: `${arg}: a whole number ≥ 1` };
        options.samples = whole;
        break;
      case '--jitter':
        if (!Number.isFinite(whole) || whole < 0) return { error: `${arg}: milliseconds ≥ 0` };
        options.jitterMs = whole;
        break;
      case '--parallel':
        if (!Number.isInteger(whole) || whole < 1 || whole > 16) return { error: `${arg}: 1 to 16` };
        options.parallel = whole;
        break;
      case '--kinds': {
        const kinds = value.split(',').map((part) => part.trim());
        const unknown = kinds.filter((kind) => !(KINDS as readonly string[]).includes(kind));
        if (unknown.length > 0 || kinds.length === 0)
          return { error: `${arg}: comma-separated, of ${KINDS.join(', ')}` };
        options.kinds = KINDS.filter((kind) => kinds.includes(kind));
        break;
      }
      default:
        return { error: `unknown option ${arg}` };
    }
  }
  return options;
}

// ── Measuring ────────────────────────────────────────────────────────────────────────────────────────

interface KindResult {
  kind: Kind;
  measures: string;
  lagMs: MsDistribution;
  /** Measured samples not seen within SAMPLE_TIMEOUT_MS (not in lagMs). */
  lost: number;
  /** Every measured lag, in the order measured (ms, 0.1 precision). */
  samplesMs: number[];
  load: { before: string; after: string };
  elapsedMs: number;
}

interface StreamLagResult {
  node: string;
  cores: number;
  commit: string | undefined;
  samples: number;
  parallel: number;
  jitterMs: number;
  kinds: KindResult[];
  load: { start: string; end: string };
  stackStartMs: number;
  elapsedMs: number;
  error?: string;
  note: string;
}

const NOTE =
  'lanes write one at a time each, after a random pause (jitterMs); one unmeasured write per lane first (cold isolates); rate limit lifted; lags are arrival − the service-stamped instant just before the commit, on one machine clock';

const say = (line: string) => console.log(`[bench]   ${line}`);
const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const f0 = (value: number) => (Number.isFinite(value) ? value.toFixed(0) : '—');
const word = (prefix: string) => `${prefix}${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;

type Api = <T>(method: string, path: string, body?: unknown) => Promise<{ status: number; body: T }>;

function apiOf(baseUrl: string, apiKey: string): Api {
  return async <T>(method: string, path: string, body?: unknown) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as T };
  };
}

interface Posted {
  id: string;
  createdAt: string;
}

/**
 * Runs one kind: `parallel` lanes, each with a conversation of its own, first one unmeasured sample
 * each (the functions' isolates start at their first use), then `samples` measured ones shared
 * among them. `sample` returns the lag in ms, or undefined when what it waited for never came.
 */
async function measureKind(
  kind: Kind,
  options: Options,
  conversations: readonly string[],
  sample: (conversationId: string, lane: number) => Promise<number | undefined>,
): Promise<KindResult> {
  const before = load();
  const started = Date.now();
  const lanes = `${conversations.length} lane${conversations.length === 1 ? '' : 's'}`;
  say(`${kind}: warm-up, one write per lane (${lanes})…`);
  await Promise.all(conversations.map((id, lane) => sample(id, lane)));
  say(`${kind}: ${options.samples} samples, ${lanes} writing one at a time…`);
  const lags: number[] = [];
  let lost = 0;
  let next = 0;
  const step = Math.max(1, Math.round(options.samples / 3));
  await Promise.all(
    conversations.map(async (id, lane) => {
      while (next < options.samples) {
        next += 1;
        // A lane that writes as soon as it has seen its previous write acts in step with the local
        // stream reader (it reads again at once after records, then sleeps 200 ms): every write
        // would land just as the reader goes to sleep and wait the whole poll. A random pause puts
        // writes anywhere in the reader's cycle, as independent writers' are.
        await sleep(Math.random() * options.jitterMs);
        const lag = await sample(id, lane);
        if (lag === undefined) lost += 1;
        else lags.push(Math.round(lag * 10) / 10);
        const done = lags.length + lost;
        if (done % step === 0 || done === options.samples) {
          const so = distribution(lags);
          say(
            `${kind}: ${done}/${options.samples} (p50 ${f0(so.p50)} ms, max ${f0(so.max)} ms${lost ? `, ${lost} lost` : ''})`,
          );
        }
      }
    }),
  );
  const result: KindResult = {
    kind,
    measures: MEASURES[kind],
    lagMs: distribution(lags),
    lost,
    samplesMs: lags,
    load: { before, after: load() },
    elapsedMs: Date.now() - started,
  };
  return result;
}

async function main(options: Options): Promise<StreamLagResult> {
  const started = Date.now();
  const result: StreamLagResult = {
    node: process.version,
    cores: availableParallelism(),
    commit: undefined,
    samples: options.samples,
    parallel: options.parallel,
    jitterMs: options.jitterMs,
    kinds: [],
    load: { start: load(), end: '' },
    stackStartMs: 0,
    elapsedMs: 0,
    note: NOTE,
  };
  try {
    result.commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    // Not a git checkout: the result says so by its absence.
  }
  say(
    `node ${result.node}, ${result.cores} cores, load ${result.load.start}, commit ${result.commit ?? '?'}; starting the observer…`,
  );
  let observer: Observer | undefined;
  let stack: LocalStack | undefined;
  try {
    observer = await startObserver();
    say(
      `observer (webhook receiver + WebSocket client) listening on 127.0.0.1:${observer.port}, its own process`,
    );
    say('starting the local stack (DynamoDB Local, SQS/S3, PostgreSQL, gateway, every worker)…');
    // Loaded here, not at the top: the observer process must not load the stack's modules.
    const { startLocalStack } = await import('../infra/local/stack');
    const stackStarted = Date.now();
    stack = await startLocalStack({
      port: 0,
      seedDemo: true,
      env: {
        POWERTOOLS_LOG_LEVEL: 'ERROR',
        // One API key writes every sample: the per-credential limit must not be what is measured.
        RATE_LIMIT_PER_MINUTE: '1000000',
        // The receiver is on loopback over http: admitted for this target only, as in the tests.
        WEBHOOK_ALLOWED_TARGETS: `127.0.0.1:${observer.port}`,
        WEBHOOK_RETRY_SCHEDULE: '1,1',
      },
      progress: (line) => say(`  ${line}`),
    });
    result.stackStartMs = Date.now() - stackStarted;
    say(`local stack ready in ${(result.stackStartMs / 1000).toFixed(1)} s at ${stack.baseUrl}`);
    const demo = stack.demo;
    if (!demo) throw new Error('the local stack was started without the demo seed');
    const api = apiOf(stack.baseUrl, demo.apiKey);
    const lanes = async () => {
      const ids: string[] = [];
      for (let i = 0; i < options.parallel; i++) {
        const created = await api<{ id: string }>('POST', '/api/conversations', {
          visitorId: demo.visitorId,
          message: 'Where is my order?',
        });
        if (created.status !== 201) throw new Error(`POST /api/conversations: ${created.status}`);
        ids.push(created.body.id);
      }
      return ids;
    };
    const post = async (conversationId: string, content: string): Promise<Posted> => {
      const posted = await api<Posted>('POST', `/api/conversations/${conversationId}/messages`, {
        content,
        operatorId: demo.adminOperatorId,
      });
      if (posted.status !== 201)
        throw new Error(`POST messages: ${posted.status} ${JSON.stringify(posted.body)}`);
      return posted.body;
    };
    const seen = (key: string) => observer?.arrival(key, SAMPLE_TIMEOUT_MS) ?? Promise.resolve(undefined);

    if (options.kinds.includes('webhook')) {
      const created = await api<{ id: string }>('POST', '/api/webhooks', {
        url: `http://127.0.0.1:${observer.port}/hooks/stream-lag`,
        events: ['message.created'],
      });
      if (created.status !== 201)
        throw new Error(`POST /api/webhooks: ${created.status} ${JSON.stringify(created.body)}`);
      result.kinds.push(
        await measureKind('webhook', options, await lanes(), async (conversationId) => {
          const message = await post(conversationId, `Any news about ${word('hook')}?`);
          const at = await seen(webhookKey('message.created', message.id));
          return at === undefined ? undefined : at - Date.parse(message.createdAt);
        }),
      );
      // The later kinds' posts must not queue deliveries beside what they measure.
      const deleted = await api('DELETE', `/api/webhooks/${created.body.id}`);
      if (deleted.status !== 200) say(`✗ DELETE /api/webhooks: ${deleted.status}`);
    }

    if (options.kinds.includes('realtime')) {
      await observer.connect(
        `${stack.baseUrl.replace(/^http/, 'ws')}/realtime?token=${encodeURIComponent(demo.adminSession)}`,
      );
      say('operator WebSocket connected (the demo admin session)');
      const conversations = await lanes();
      // Each lane edits one operator message of its own, again and again (a new one before the
      // 5-minute edit window closes): the edit's only stream records are its own.
      const targets: (Posted | undefined)[] = conversations.map(() => undefined);
      result.kinds.push(
        await measureKind('realtime', options, conversations, async (conversationId, lane) => {
          let target = targets[lane];
          if (!target || Date.now() - Date.parse(target.createdAt) > EDIT_TARGET_MAX_AGE_MS) {
            target = await post(conversationId, 'It left our warehouse this morning.');
            targets[lane] = target;
          }
          const edited = await api<{ editedAt?: string }>(
            'PATCH',
            `/api/conversations/${conversationId}/messages/${target.id}`,
            { content: `It left our warehouse this morning: tracking number ${word('TRK')}` },
          );
          if (edited.status !== 200 || typeof edited.body.editedAt !== 'string')
            throw new Error(`PATCH message: ${edited.status} ${JSON.stringify(edited.body)}`);
          const at = await seen(noticeKey('message_edited', target.id, edited.body.editedAt));
          return at === undefined ? undefined : at - Date.parse(edited.body.editedAt);
        }),
      );
    }

    if (options.kinds.includes('search')) {
      type Page = { total?: number };
      /** The instant the first answer that finds `q` was received; undefined after the timeout. */
      const searchable = async (q: string): Promise<number | undefined> => {
        const deadline = Date.now() + SAMPLE_TIMEOUT_MS;
        for (;;) {
          const found = await api<Page>('GET', `/api/conversations/search?${new URLSearchParams({ q })}`);
          const at = epochNow();
          if (found.status === 200 && (found.body.total ?? 0) > 0) return at;
          if (Date.now() > deadline) return undefined;
          await sleep(SEARCH_POLL_MS);
        }
      };
      result.kinds.push(
        await measureKind('search', options, await lanes(), async (conversationId) => {
          const unique = word('lag');
          const message = await post(conversationId, `Any news about ${unique}?`);
          const at = await searchable(unique);
          return at === undefined ? undefined : at - Date.parse(message.createdAt);
        }),
      );
    }
  } catch (error) {
    result.error = error instanceof Error ? (error.stack ?? error.message) : String(error);
    say(`✗ ${result.error}`);
  } finally {
    observer?.close();
    if (stack) {
      say('stopping the local stack…');
      await stack.stop().catch(() => undefined);
    }
  }
  result.load.end = load();
  result.elapsedMs = Date.now() - started;
  return result;
}

function report(result: StreamLagResult): void {
  const rows = result.kinds.map((kind) => [
    kind.kind,
    String(kind.lagMs.count),
    f0(kind.lagMs.p50),
    f0(kind.lagMs.p99),
    f0(kind.lagMs.max),
    String(kind.lost),
    `${kind.load.before} → ${kind.load.after}`,
  ]);
  const headers = ['kind', 'n', 'p50 ms', 'p99 ms', 'max ms', 'lost', 'load (1/5/15 min) before → after'];
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) =>
        i === 6 ? cell : i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0),
      )
      .join('  ');
  console.log('');
  console.log(
    `Stream lag, commit → seen (node ${result.node}, ${result.cores} cores, commit ${result.commit ?? '?'})`,
  );
  console.log(`  ${line(headers)}`);
  for (const row of rows) console.log(`  ${line(row)}`);
  console.log('');
  for (const kind of result.kinds) console.log(`  ${kind.kind}: ${kind.measures}`);
  console.log(`  load average (1/5/15 min): start ${result.load.start}, end ${result.load.end}`);
  console.log(`  ${result.note}; ${(result.elapsedMs / 1000).toFixed(0)} s in all`);
  if (result.error) console.log(`  ✗ ${result.error.split('\n')[0]}`);
}

if (process.argv.includes('--observer')) runObserver();
else {
  const parsed = parse(process.argv.slice(2));
  if (parsed === 'help' || 'error' in parsed) {
    if (parsed !== 'help') console.error(`${parsed.error}\n`);
    console.log(USAGE);
    process.exit(parsed === 'help' ? 0 : 2);
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
  const result = await main(parsed);
  report(result);
  console.log(`${RESULT_MARKER}${JSON.stringify(result)}`);
  // SDK keep-alive sockets and emulator leftovers must not hold the bench open.
  process.exit(result.error ? 1 : 0);
}
