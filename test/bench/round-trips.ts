import type { LocalStack } from '../../infra/local/stack';
import { CAPACITY_COMMANDS, capacityReports, WRITE_COMMANDS } from '../../shared/db/meter';
import { contactScenarios } from './contact-scenarios';
import { conversationScenarios } from './conversation-scenarios';
import { customFieldScenarios } from './custom-field-scenarios';
import { exportScenarios } from './export-scenarios';
import { kbScenarios } from './kb-scenarios';
import { platformScenarios } from './platform-scenarios';
import { statsScenarios } from './stats-scenarios';
import { teamScenarios } from './team-scenarios';
import { uploadScenarios } from './upload-scenarios';
import { webhookScenarios } from './webhook-scenarios';

/** Why a request touched DynamoDB, by the code that sent the command. */
export type Purpose = 'auth' | 'rate' | 'idempotency' | 'route';

export const purposeLetter: Record<Purpose, string> = {
  auth: 'A',
  rate: 'R',
  idempotency: 'I',
  route: 'H',
};

/** Capacity units DynamoDB Local reported (ReturnConsumedCapacity INDEXES), reads and writes apart. */
export interface Capacity {
  read: number;
  write: number;
  /** Write units by where they landed: `table` and each index by name. */
  writeBy: Record<string, number>;
  /** Read units by where they were read. */
  readBy: Record<string, number>;
}

export interface Tally {
  /** Capacity units of every command the request sent (all purposes). */
  capacity: Capacity;
  /** Round trips one after another: commands sent while another is in flight share its trip. */
  trips: number;
  /** Commands sent (one round trip each unless retried). */
  sends: number;
  /** HTTP attempts, retries included: should equal `sends`. */
  attempts: number;
  byPurpose: Record<Purpose, number>;
  operations: string[];
  /** The operations the route itself sent (H), in order. */
  routeOperations: string[];
}

export interface Measured {
  tally: Tally;
  status: number;
}

/**
 * What the warm figures are judged against: `read` one round trip and no auth read; `transaction`
 * exactly one TransactWriteItems from the route and no auth or rate-limit trip; `bulk` (bulk writes
 * and read-state changes, whose cost scales with their ids) and `overhead` (other writes) no auth
 * or rate-limit trip.
 */
export type TargetKind =
  | 'read'
  | 'childRead'
  | 'job'
  | 'stream'
  | 'ownLimit'
  | 'listing'
  | 'transaction'
  | 'bulk'
  | 'overhead'
  | 'uncached';

export interface EndpointResult {
  /** `METHOD /path/template` of the route table. */
  route: string;
  variant: string;
  caller: string;
  target: TargetKind;
  expectedStatus: number;
  cold?: Measured;
  warm?: Measured;
  error?: string;
}

export interface RoundTripReport {
  results: EndpointResult[];
  /** Routes of the route table with no scenario here (a new endpoint the bench must learn). */
  uncovered: string[];
  /** How the counter was attached, for the report. */
  counterNote: string;
}

export interface Call {
  method: string;
  path: string;
  token?: string;
  headers?: Record<string, string>;
  body?: unknown;
}

export type Attempt = 'cold' | 'warm';

export interface Scenario {
  route: string;
  variant?: string;
  caller: 'public' | 'platform' | 'apiKey' | 'operator' | 'visitor' | 'widget';
  expectedStatus: number;
  /**
   * Single-conversation writes (`transaction`) and bulk or read-state writes (`bulk`, judged on
   * overhead only); unset: `read` for GET, overhead only otherwise.
   */
  /**
   * `uncached`: a credential authentication reads on every request by design (an impersonation
   * session, so that ending it takes effect everywhere at once): one auth read allowed warm.
   */
  /**
   * `childRead`: a read of a conversation's or webhook's children whose access rule needs the
   * parent (it exists in the organization, the history window, the visitor's own): issue 14 allows
   * two requests warm, the parent and the page.
   * `job`: a GET that starts a job (the PDF transcript, 202): its write is the point, judged on
   * overhead only.
   * `stream`: a streamed export reads page after page by nature (its count, then each page's
   * conversations and messages); its cost per 1,000 messages is phase 7's figure, and here only
   * the overhead is judged.
   * `ownLimit`: a route with a per-organization limit of its own (team creation, transcript
   * e-mails), whose window is counted on every request: one rate trip allowed warm, no auth trip.
   */
  target?: 'transaction' | 'bulk' | 'listing' | 'uncached' | 'childRead' | 'job' | 'stream' | 'ownLimit';
  /**
   * Called once per attempt, before it is measured (and, cold, before the caches are cleared):
   * non-repeatable requests (revoke, unique e-mail) differ in their ids, and fixtures a request
   * needs (a fresh note to delete, messages to mark) are written here, unmeasured.
   */
  call: (attempt: Attempt) => Call | Promise<Call>;
}

const emptyTally = (): Tally => ({
  capacity: { read: 0, write: 0, writeBy: {}, readBy: {} },
  trips: 0,
  sends: 0,
  attempts: 0,
  byPurpose: { auth: 0, rate: 0, idempotency: 0, route: 0 },
  operations: [],
  routeOperations: [],
});

/**
 * Background work (stream and queue consumers: the webhook fan-out and deliveries, the purge after a
 * bulk delete…): not a request's. Named by its worker, for the report.
 */
function backgroundWorker(stack: string): string | undefined {
  const worker = /functions[\\/]workers[\\/]([\w-]+)/.exec(stack)?.[1];
  if (worker) return worker;
  return /shared[\\/]db[\\/]purge/.test(stack) ? 'conversation-purge' : undefined;
}

/** Adds a command's reported units to the request's, by table and index. */
function addCapacity(capacity: Capacity, commandName: string, consumed: unknown): void {
  const write = WRITE_COMMANDS.has(commandName);
  const by = write ? capacity.writeBy : capacity.readBy;
  for (const report of capacityReports(consumed)) {
    const units = report.CapacityUnits ?? 0;
    if (write) capacity.write += units;
    else capacity.read += units;
    by.table = (by.table ?? 0) + (report.Table?.CapacityUnits ?? 0);
    for (const [index, part] of Object.entries(report.GlobalSecondaryIndexes ?? {}))
      by[index] = (by[index] ?? 0) + (part.CapacityUnits ?? 0);
  }
}

/** The synchronous stack of the SDK's first middleware: it names the sending code (tsx maps it to .ts). */
function captureStack(): string {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 80;
  const stack = new Error().stack ?? '';
  Error.stackTraceLimit = limit;
  return stack;
}

/** The sending code's purpose, from that stack. */
function purposeFromStack(stack: string): Purpose | undefined {
  if (/shared[\\/]auth[\\/]authenticate/.test(stack)) return 'auth';
  if (/shared[\\/](?:http[\\/]rate-limiter|db[\\/]rate-windows)/.test(stack)) return 'rate';
  if (/shared[\\/](?:http[\\/]middleware[\\/]idempotency|db[\\/]idempotency)/.test(stack))
    return 'idempotency';
  // An export's pages are read by an async generator (shared/exports) whose stack names no route.
  if (/functions[\\/]|shared[\\/]exports[\\/]/.test(stack)) return 'route';
  return undefined;
}

/** When the stack says nothing useful: the key tells rate windows and idempotency records apart. */
function purposeFromCommand(commandName: string, input: unknown): Purpose {
  const key = (input as { Key?: { pk?: unknown } } | undefined)?.Key?.pk;
  const pk = typeof key === 'string' ? key : ((key as { S?: string } | undefined)?.S ?? '');
  if (pk.includes('#RATE#')) return 'rate';
  if (pk.includes('#IDEMPOTENCY#')) return 'idempotency';
  if (commandName === 'BatchGetItemCommand') return 'auth';
  return 'route';
}

async function send(baseUrl: string, call: Call): Promise<{ status: number; body: unknown }> {
  const headers: Record<string, string> = { ...call.headers };
  if (call.token) headers.Authorization = `Bearer ${call.token}`;
  let body: string | undefined;
  if (call.body !== undefined) {
    body = JSON.stringify(call.body);
    headers['Content-Type'] = 'application/json';
  }
  const response = await fetch(`${baseUrl}${call.path}`, { method: call.method, headers, body });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: response.status, body: parsed };
}

function field(body: unknown, name: string): string {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  if (typeof value !== 'string') throw new Error(`response has no string "${name}": ${JSON.stringify(body)}`);
  return value;
}

/**
 * Counts DynamoDB round trips per request against DynamoDB Local, over HTTP through the local
 * gateway, for every route of the route table: once cold (auth cache cleared and the clock moved to
 * the next rate-limit window, as a fresh container would see it), once warm (the same request again).
 */
export async function measureRoundTrips(
  stack: LocalStack,
  log: (line: string) => void,
  options: {
    /** An allow-listed `http://127.0.0.1:<port>` where nothing listens (failed webhook deliveries). */
    deadWebhookTarget: string;
    /** The fake Discord API (DISCORD_API_BASE_URL) and OpenAI-compatible API the stack reaches. */
    fakeDiscordUrl: string;
    fakeOpenAiUrl: string;
  },
): Promise<RoundTripReport> {
  // The same module instances the gateway's handlers use (same file URLs), imported after the stack
  // set the environment.
  const { dynamo, db } = await import('../../shared/db/client');
  const { clock } = await import('../../shared/clock');
  const { authCache } = await import('../../shared/auth/authenticate');
  const { routeTable } = await import('../../functions/routes');

  let current: Tally | undefined;
  /** Commands of the measured request in flight, for counting trips one after another. */
  let inFlight = 0;
  let seen = 0;
  let background = 0;
  const backgroundByWorker = new Map<string, number>();
  /** Commands (by their execution context) of the background workers. */
  const backgroundCommands = new WeakSet<object>();
  const shared = db.middlewareStack === dynamo.middlewareStack;
  dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      seen += 1;
      const stack = current ? captureStack() : '';
      const worker = current ? backgroundWorker(stack) : undefined;
      if (current && worker) {
        background += 1;
        backgroundByWorker.set(worker, (backgroundByWorker.get(worker) ?? 0) + 1);
        backgroundCommands.add(context);
      } else if (current) {
        const name = context.commandName ?? 'unknown';
        const operation = name.replace(/Command$/, '');
        const purpose = purposeFromStack(stack) ?? purposeFromCommand(name, args.input);
        current.sends += 1;
        current.byPurpose[purpose] += 1;
        current.operations.push(operation);
        if (purpose === 'route') current.routeOperations.push(operation);
        if (inFlight === 0) current.trips += 1;
        inFlight += 1;
        try {
          if (!CAPACITY_COMMANDS.has(name)) return await next(args);
          // DynamoDB Local reports what AWS would bill, index writes included.
          (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'INDEXES';
          const tally = current;
          const result = await next(args);
          addCapacity(
            tally.capacity,
            name,
            (result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity,
          );
          return result;
        } finally {
          inFlight -= 1;
        }
      }
      return next(args);
    },
    { step: 'initialize', priority: 'high', name: 'benchRoundTrips' },
  );
  // Innermost step: runs once per HTTP attempt, so retries would show.
  dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      if (current && !backgroundCommands.has(context)) current.attempts += 1;
      return next(args);
    },
    { step: 'deserialize', priority: 'low', name: 'benchAttempts' },
  );
  if (!shared) {
    throw new Error('the DocumentClient no longer shares the low-level client middleware stack');
  }

  const platform = stack.platformAdminToken;
  const demo = stack.demo;
  if (!demo) throw new Error('the local stack was started without the demo seed');
  const base = stack.baseUrl;
  const expectOk = async (call: Call, status: number, what: string) => {
    const response = await send(base, call);
    if (response.status !== status)
      throw new Error(`${what}: expected ${status}, got ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  };

  log('creating fixtures (conversation, API keys to revoke) with the demo credentials…');
  const orgPath = `/api/admin/organizations/${demo.organizationId}`;
  const conversationId = field(
    await expectOk(
      {
        method: 'POST',
        path: '/api/conversations',
        token: demo.apiKey,
        body: { visitorId: demo.visitorId, message: 'Hello from the bench' },
      },
      201,
      'create conversation',
    ),
    'id',
  );
  const revocable: string[] = [];
  for (let i = 0; i < 2; i++) {
    revocable.push(
      field(
        await expectOk(
          { method: 'POST', path: `${orgPath}/api-keys`, token: platform, body: { name: `revoke-${i}` } },
          201,
          'create key',
        ),
        'id',
      ),
    );
  }
  if (seen === 0) throw new Error('the round-trip counter saw no DynamoDB command during setup');

  const conversationBody = { visitorId: demo.visitorId, message: 'Where is my order?' };
  const scenarios: Scenario[] = [
    { route: 'GET /api/health', caller: 'public', expectedStatus: 200, call: () => get('/api/health') },
    {
      route: 'GET /api/openapi.json',
      caller: 'public',
      expectedStatus: 200,
      call: () => get('/api/openapi.json'),
    },
    { route: 'GET /api/docs', caller: 'public', expectedStatus: 200, call: () => get('/api/docs') },
    {
      route: 'GET /api/docs/assets/{file}',
      caller: 'public',
      expectedStatus: 200,
      call: () => get('/api/docs/assets/swagger-ui.css'),
    },
    {
      route: 'POST /api/admin/organizations',
      caller: 'platform',
      expectedStatus: 201,
      call: () => ({
        method: 'POST',
        path: '/api/admin/organizations',
        token: platform,
        body: { name: 'Bench org', modules: ['automation_api'] },
      }),
    },
    {
      route: 'GET /api/admin/organizations/{orgId}',
      caller: 'platform',
      expectedStatus: 200,
      call: () => get(orgPath, platform),
    },
    {
      route: 'PATCH /api/admin/organizations/{orgId}',
      caller: 'platform',
      expectedStatus: 200,
      call: () => ({ method: 'PATCH', path: orgPath, token: platform, body: { name: 'Demo Organization' } }),
    },
    {
      route: 'POST /api/admin/organizations/{orgId}/api-keys',
      caller: 'platform',
      expectedStatus: 201,
      call: () => ({
        method: 'POST',
        path: `${orgPath}/api-keys`,
        token: platform,
        body: { name: 'bench', scopes: ['conversations:read'] },
      }),
    },
    {
      route: 'DELETE /api/admin/organizations/{orgId}/api-keys/{keyId}',
      caller: 'platform',
      expectedStatus: 200,
      call: (attempt) => ({
        method: 'DELETE',
        path: `${orgPath}/api-keys/${revocable[attempt === 'cold' ? 0 : 1]}`,
        token: platform,
      }),
    },
    {
      route: 'POST /api/admin/organizations/{orgId}/operators',
      caller: 'platform',
      expectedStatus: 201,
      call: () => ({
        method: 'POST',
        path: `${orgPath}/operators`,
        token: platform,
        body: { name: 'Bench operator', email: `bench-${crypto.randomUUID()}@example.com`, role: 'operator' },
      }),
    },
    {
      route: 'POST /api/admin/organizations/{orgId}/operators/{operatorId}/sessions',
      caller: 'platform',
      expectedStatus: 201,
      call: () => ({
        method: 'POST',
        path: `${orgPath}/operators/${demo.adminOperatorId}/sessions`,
        token: platform,
      }),
    },
    {
      route: 'POST /api/widget/visitors',
      caller: 'widget',
      expectedStatus: 201,
      call: () => ({
        method: 'POST',
        path: '/api/widget/visitors',
        headers: { 'X-Widget-Key': demo.widgetKey },
        body: { identifier: 'grace@example.com' },
      }),
    },
    { route: 'GET /api/me', caller: 'apiKey', expectedStatus: 200, call: () => get('/api/me', demo.apiKey) },
    {
      route: 'GET /api/conversations',
      caller: 'apiKey',
      target: 'listing',
      expectedStatus: 200,
      call: () => get('/api/conversations', demo.apiKey),
    },
    {
      route: 'GET /api/conversations',
      variant: 'status filter',
      caller: 'operator',
      target: 'listing',
      expectedStatus: 200,
      call: () => get('/api/conversations?status=open&limit=5', demo.adminSession),
    },
    {
      route: 'POST /api/conversations',
      caller: 'apiKey',
      expectedStatus: 201,
      call: () => ({
        method: 'POST',
        path: '/api/conversations',
        token: demo.apiKey,
        body: conversationBody,
      }),
    },
    {
      route: 'POST /api/conversations',
      variant: 'Idempotency-Key',
      caller: 'apiKey',
      expectedStatus: 201,
      call: () => ({
        method: 'POST',
        path: '/api/conversations',
        token: demo.apiKey,
        headers: { 'Idempotency-Key': `bench-${crypto.randomUUID()}` },
        body: conversationBody,
      }),
    },
    {
      route: 'GET /api/conversations/{id}',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => get(`/api/conversations/${conversationId}`, demo.apiKey),
    },
    {
      route: 'GET /api/conversations/{id}',
      caller: 'operator',
      expectedStatus: 200,
      call: () => get(`/api/conversations/${conversationId}`, demo.adminSession),
    },
    {
      route: 'GET /api/conversations/{id}',
      caller: 'visitor',
      expectedStatus: 200,
      call: () => get(`/api/conversations/${conversationId}`, demo.visitorToken),
    },
  ];
  log('creating fixtures for conversation state, messages, notes and bulk scenarios…');
  scenarios.push(
    ...(await conversationScenarios({
      demo,
      platform,
      orgPath,
      conversationId,
      request: expectOk,
      nowMs: clock.nowMs,
    })),
  );
  scenarios.push(...(await uploadScenarios({ demo, conversationId, request: expectOk })));
  // Search reads the index (PostgreSQL), then the page's conversations from the table.
  scenarios.push({
    route: 'GET /api/conversations/search',
    caller: 'apiKey',
    expectedStatus: 200,
    call: () => ({
      method: 'GET',
      path: '/api/conversations/search?q=status%3Aopen&limit=20',
      token: demo.apiKey,
    }),
  });
  log('creating custom-field fixtures…');
  scenarios.push(...(await customFieldScenarios({ demo, platform, orgPath, request: expectOk })));
  log('creating knowledge-base fixtures…');
  scenarios.push(...(await kbScenarios({ demo, platform, orgPath, request: expectOk })));
  log('creating export fixtures (a PDF job)…');
  scenarios.push(...(await exportScenarios({ demo, platform, orgPath, conversationId, request: expectOk })));
  log('creating survey fixtures and 90 days of aggregates…');
  scenarios.push(
    ...(await statsScenarios({ demo, platform, orgPath, request: expectOk, nowMs: clock.nowMs })),
  );
  log('creating webhook fixtures (failed deliveries to retry: test events to a port where nothing listens)…');
  scenarios.push(
    ...(await webhookScenarios({
      demo,
      platform,
      orgPath,
      request: expectOk,
      deadTarget: options.deadWebhookTarget,
    })),
  );
  log('creating operator-team fixtures…');
  scenarios.push(...(await teamScenarios({ demo, platform, orgPath, request: expectOk })));

  log('creating contact fixtures (issue 27: audit log, visitors, incremental sync)…');
  scenarios.push(
    ...(await contactScenarios({ demo, platform, orgPath, request: expectOk, nowMs: clock.nowMs })),
  );

  log('creating chatbot, Discord, impersonation and AI provider fixtures…');
  scenarios.push(
    ...(await platformScenarios({
      demo,
      platform,
      orgPath,
      request: expectOk,
      baseUrl: base,
      fakeDiscordUrl: options.fakeDiscordUrl,
      fakeOpenAiUrl: options.fakeOpenAiUrl,
    })),
  );

  const routes = routeTable().flatMap((group) =>
    group.routes.map((route) => `${route.method} ${route.path}`),
  );
  const covered = new Set(scenarios.map((scenario) => scenario.route));
  const uncovered = routes.filter((route) => !covered.has(route));
  const ordered = [...scenarios].sort((a, b) => routes.indexOf(a.route) - routes.indexOf(b.route));

  const measure = async (call: Call): Promise<Measured> => {
    const tally = emptyTally();
    current = tally;
    try {
      const response = await send(base, call);
      return { tally, status: response.status };
    } finally {
      current = undefined;
    }
  };
  const windowOf = () => Math.floor(clock.nowMs() / 60_000);

  log(`measuring ${ordered.length} requests cold, then warm…`);
  const results: EndpointResult[] = [];
  for (const scenario of ordered) {
    const result: EndpointResult = {
      route: scenario.route,
      variant: scenario.variant ?? '',
      caller: scenario.caller,
      target: scenario.target ?? (scenario.route.startsWith('GET ') ? 'read' : 'overhead'),
      expectedStatus: scenario.expectedStatus,
    };
    try {
      const cold = await scenario.call('cold');
      // A fresh container: nothing cached, no rate-limit lease for the current window.
      authCache.clear();
      clock.advance(60_000);
      result.cold = await measure(cold);
      const window = windowOf();
      result.warm = await measure(await scenario.call('warm'));
      // A real minute boundary between the two would make the warm request take a new lease; so
      // does the lease running out (a lease holds 1/50 of the minute's limit: one trip per ~24
      // requests at 1,200). Either is that many requests' share, not this one's: measure again.
      const leased = result.warm.tally.byPurpose.rate > 0 && result.target !== 'ownLimit';
      if (windowOf() !== window || leased) result.warm = await measure(await scenario.call('warm'));
    } catch (error) {
      result.error = error instanceof Error ? error.message : String(error);
    }
    results.push(result);
  }
  clock.reset();
  return {
    results,
    uncovered,
    counterNote:
      'counted by an initialize-step middleware on the shared low-level client ' +
      '(the DocumentClient uses the same middleware stack, so each command counts once); ' +
      `commands of the background workers (stream and queue consumers) are not counted: ${background} during the measurements` +
      (backgroundByWorker.size > 0
        ? ` (${[...backgroundByWorker]
            .sort((a, b) => b[1] - a[1])
            .map(([name, count]) => `${name} ${count}`)
            .join(', ')})`
        : ''),
  };
}

function get(path: string, token?: string): Call {
  return token ? { method: 'GET', path, token } : { method: 'GET', path };
}
