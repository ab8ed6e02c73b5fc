import type { InvocationReport } from '../infra/local/runtime';
import type { LocalStack } from '../infra/local/stack';
import { type InvocationUsage, WRITE_COMMANDS } from '../shared/db/meter';
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
 * A request's tally from its function's report: the isolate traced every command the invocation
 * sent (shared/db/meter.ts), with its units by table and index and the source files that sent it.
 */
function tallyOf(usage: InvocationUsage): Tally {
  const tally = emptyTally();
  tally.sends = usage.commands;
  tally.attempts = usage.attempts;
  tally.trips = usage.trips;
  tally.capacity.read = usage.readUnits;
  tally.capacity.write = usage.writeUnits;
  for (const command of usage.trace ?? []) {
    const purpose =
      purposeFromStack(command.origin.join('\n')) ?? purposeFromCommand(command.operation, command.pk);
    tally.byPurpose[purpose] += 1;
    tally.operations.push(command.operation);
    if (purpose === 'route') tally.routeOperations.push(command.operation);
    const by = WRITE_COMMANDS.has(`${command.operation}Command`)
      ? tally.capacity.writeBy
      : tally.capacity.readBy;
    for (const [where, units] of Object.entries(command.unitsBy)) by[where] = (by[where] ?? 0) + units;
  }
  return tally;
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
function purposeFromCommand(operation: string, pk = ''): Purpose {
  if (pk.includes('#RATE#')) return 'rate';
  if (pk.includes('#IDEMPOTENCY#')) return 'idempotency';
  if (operation === 'BatchGetItem') return 'auth';
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
  // The bench's clock moves with the functions' (runtime.setClockOffset): fixtures dated in the
  // past, and the rate-limit window each request falls in.
  const { clock } = await import('../shared/clock');
  const { routeTable } = await import('../functions/routes');
  const groupOf = new Map<string, string>();
  for (const group of routeTable())
    for (const route of group.routes) groupOf.set(`${route.method} ${route.path}`, group.name);

  // Each function's isolate measures its own DynamoDB commands per invocation and reports them with
  // the invocation's outcome (infra/local/isolate-main.ts); traced, each command comes with its
  // units by index and the code that sent it.
  stack.runtime.setDynamoTrace(true);
  /** The measured request's route group and the invocations of it seen while it was in flight. */
  let current: { group: string; reports: InvocationReport[] } | undefined;
  let seen = 0;
  let background = 0;
  const backgroundByWorker = new Map<string, number>();
  const unsubscribe = stack.runtime.onInvocation((report) => {
    seen += report.usage.commands;
    if (!current) return;
    if (report.function === current.group) current.reports.push(report);
    else if (report.kind === 'worker' && report.usage.commands > 0) {
      background += report.usage.commands;
      backgroundByWorker.set(
        report.function,
        (backgroundByWorker.get(report.function) ?? 0) + report.usage.commands,
      );
    }
  });
  let clockOffsetMs = 0;
  const advanceClock = (ms: number) => {
    clockOffsetMs += ms;
    clock.advance(ms);
    stack.runtime.setClockOffset(clockOffsetMs);
  };

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

  const measure = async (route: string, call: Call): Promise<Measured> => {
    const group = groupOf.get(route);
    if (!group) throw new Error(`${route} is not in the route table`);
    const measured = { group, reports: [] as InvocationReport[] };
    current = measured;
    try {
      const response = await send(base, call);
      // The isolate reports with its answer, so the report is in by the time the answer is.
      if (measured.reports.length !== 1)
        throw new Error(`${measured.reports.length} invocations of ${group} reported for one request`);
      const [report] = measured.reports;
      if (!report) throw new Error('no report');
      return { tally: tallyOf(report.usage), status: response.status };
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
      // A fresh container: the auth cache (10 s) has expired, no rate-limit lease for the window.
      advanceClock(60_000);
      result.cold = await measure(scenario.route, cold);
      const window = windowOf();
      result.warm = await measure(scenario.route, await scenario.call('warm'));
      // A real minute boundary between the two would make the warm request take a new lease; so
      // does the lease running out (a lease holds 1/50 of the minute's limit: one trip per ~24
      // requests at 1,200). Either is that many requests' share, not this one's: measure again.
      const leased = result.warm.tally.byPurpose.rate > 0 && result.target !== 'ownLimit';
      if (windowOf() !== window || leased)
        result.warm = await measure(scenario.route, await scenario.call('warm'));
    } catch (error) {
      result.error = error instanceof Error ? error.message : String(error);
    }
    results.push(result);
  }
  unsubscribe();
  stack.runtime.setDynamoTrace(false);
  clock.reset();
  stack.runtime.setClockOffset(0);
  return {
    results,
    uncovered,
    counterNote:
      "counted in each function's isolate by the table client's meter (shared/db/meter.ts: one " +
      'initialize-step middleware, so a DocumentClient command counts once), per invocation, and ' +
      'reported with its answer; ' +
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
