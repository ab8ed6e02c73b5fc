/**
 * The tenant ceiling's writes: what an integrator does to one organization, each repeated over
 * distinct conversations (how a tenant's traffic spreads) or into one conversation (where that is
 * how the write comes: a chat's messages, a busy conversation's PATCHes), with the fixtures each
 * needs, and the measurement of one write from the layer's ledger.
 */
import type { Ledger, LedgerSnapshot } from '../infra/local/dynamodb-semantics';
import type { LocalStack } from '../infra/local/stack';
import { type WriteFigure, writeFigure } from './tenant-ceiling-report';

export interface Call {
  method: string;
  path: string;
  /** `Authorization: Bearer …` */
  token?: string;
  /** `X-Widget-Key` instead. */
  widgetKey?: string;
  body?: unknown;
}

export interface Answer {
  status: number;
  body: unknown;
  ms: number;
}

export async function send(base: string, call: Call): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (call.token) headers.Authorization = `Bearer ${call.token}`;
  if (call.widgetKey) headers['X-Widget-Key'] = call.widgetKey;
  if (call.body !== undefined) headers['Content-Type'] = 'application/json';
  const started = performance.now();
  const response = await fetch(`${base}${call.path}`, {
    method: call.method,
    headers,
    body: call.body === undefined ? undefined : JSON.stringify(call.body),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON: kept as text for the failure line.
  }
  return { status: response.status, body, ms };
}

/** The call's answer, which must have `status`; the bench stops with the body otherwise. */
export async function expect(base: string, call: Call, status: number): Promise<Record<string, unknown>> {
  const answer = await send(base, call);
  if (answer.status !== status)
    throw new Error(
      `${call.method} ${call.path}: expected ${status}, got ${answer.status} ${JSON.stringify(answer.body)}`,
    );
  return (answer.body ?? {}) as Record<string, unknown>;
}

const stringAt = (body: Record<string, unknown>, ...path: string[]): string => {
  let value: unknown = body;
  for (const name of path) value = (value as Record<string, unknown> | undefined)?.[name];
  if (typeof value !== 'string') throw new Error(`no string at ${path.join('.')}: ${JSON.stringify(body)}`);
  return value;
};

export interface Visitor {
  id: string;
  token: string;
}

/** The organization and its credentials: what the demo seed gives, and visitors of the widget. */
export interface Tenant {
  organizationId: string;
  apiKey: string;
  session: string;
  operatorId: string;
  widgetKey: string;
}

export async function createVisitors(base: string, tenant: Tenant, count: number): Promise<Visitor[]> {
  const visitors: Visitor[] = [];
  for (let i = 0; i < count; i++) {
    const body = await expect(
      base,
      { method: 'POST', path: '/api/widget/visitors', widgetKey: tenant.widgetKey, body: {} },
      201,
    );
    visitors.push({ id: stringAt(body, 'visitor', 'id'), token: stringAt(body, 'token') });
  }
  return visitors;
}

/** A conversation the visitor starts from the widget: its first message is the visitor's, unread. */
export async function startConversation(base: string, visitor: Visitor): Promise<string> {
  const body = await expect(
    base,
    {
      method: 'POST',
      path: '/api/conversations',
      token: visitor.token,
      body: { message: 'Where is my parcel?' },
    },
    201,
  );
  return stringAt(body, 'id');
}

export type Pattern = 'distinct' | 'one conversation';

export interface Scenario {
  write: string;
  pattern: Pattern;
  status: number;
  /** Writes the fixtures (unmeasured) and returns the `n` calls to measure. */
  prepare: (base: string, tenant: Tenant, visitors: Visitor[], n: number) => Promise<Call[]>;
}

const PRIORITIES = ['high', 'low', 'urgent', 'normal'] as const;

/** n conversations, the i-th started by visitor i. */
const conversations = async (base: string, visitors: Visitor[], n: number): Promise<string[]> => {
  const ids: string[] = [];
  for (let i = 0; i < n; i++)
    ids.push(await startConversation(base, visitors[i % visitors.length] as Visitor));
  return ids;
};

type Author = 'visitor' | 'operator' | 'key';
const AUTHORS: Record<Author, string> = {
  visitor: 'post · visitor (widget token)',
  operator: 'post · operator (session)',
  key: 'post · API key',
};

function postScenario(author: Author, pattern: Pattern): Scenario {
  return {
    write: AUTHORS[author],
    pattern,
    status: 201,
    prepare: async (base, tenant, visitors, n) => {
      const ids = await conversations(base, visitors, pattern === 'distinct' ? n : 1);
      return Array.from({ length: n }, (_, i) => {
        const at = pattern === 'distinct' ? i : 0;
        const token =
          author === 'visitor'
            ? (visitors[at % visitors.length] as Visitor).token
            : author === 'operator'
              ? tenant.session
              : tenant.apiKey;
        return {
          method: 'POST',
          path: `/api/conversations/${ids[at]}/messages`,
          token,
          // An API key writes as an operator it names.
          body: {
            content: `Message ${i + 1}: it left the depot this morning.`,
            ...(author === 'key' ? { operatorId: tenant.operatorId } : {}),
          },
        };
      });
    },
  };
}

/** One call per conversation, or all into the first. */
function onConversations(
  write: string,
  pattern: Pattern,
  status: number,
  call: (id: string, i: number, tenant: Tenant) => Call,
): Scenario {
  return {
    write,
    pattern,
    status,
    prepare: async (base, tenant, visitors, n) => {
      const ids = await conversations(base, visitors, pattern === 'distinct' ? n : 1);
      return Array.from({ length: n }, (_, i) =>
        call(ids[pattern === 'distinct' ? i : 0] as string, i, tenant),
      );
    },
  };
}

export const SCENARIOS: Scenario[] = [
  postScenario('visitor', 'distinct'),
  postScenario('visitor', 'one conversation'),
  postScenario('operator', 'distinct'),
  postScenario('operator', 'one conversation'),
  postScenario('key', 'distinct'),
  postScenario('key', 'one conversation'),
  {
    write: 'create + first message · API key',
    pattern: 'distinct',
    status: 201,
    prepare: async (_base, tenant, visitors, n) =>
      Array.from({ length: n }, (_, i) => ({
        method: 'POST',
        path: '/api/conversations',
        token: tenant.apiKey,
        body: { visitorId: (visitors[i % visitors.length] as Visitor).id, message: 'Order #1234 is late' },
      })),
  },
  {
    write: 'create + first message · visitor',
    pattern: 'distinct',
    status: 201,
    prepare: async (_base, _tenant, visitors, n) =>
      Array.from({ length: n }, (_, i) => ({
        method: 'POST',
        path: '/api/conversations',
        token: (visitors[i % visitors.length] as Visitor).token,
        body: { message: 'Hello, is anyone there?' },
      })),
  },
  onConversations('PATCH priority', 'distinct', 200, (id, _i, tenant) => ({
    method: 'PATCH',
    path: `/api/conversations/${id}`,
    token: tenant.apiKey,
    body: { priority: 'high' },
  })),
  onConversations('PATCH priority', 'one conversation', 200, (id, i, tenant) => ({
    method: 'PATCH',
    path: `/api/conversations/${id}`,
    token: tenant.apiKey,
    body: { priority: PRIORITIES[i % PRIORITIES.length] },
  })),
  onConversations('PATCH status → pending', 'distinct', 200, (id, _i, tenant) => ({
    method: 'PATCH',
    path: `/api/conversations/${id}`,
    token: tenant.apiKey,
    body: { status: 'pending' },
  })),
  onConversations('close (PATCH status → closed)', 'distinct', 200, (id, _i, tenant) => ({
    method: 'PATCH',
    path: `/api/conversations/${id}`,
    token: tenant.apiKey,
    body: { status: 'closed' },
  })),
  onConversations('snooze', 'distinct', 200, (id, _i, tenant) => ({
    method: 'POST',
    path: `/api/conversations/${id}/snooze`,
    token: tenant.apiKey,
    body: { until: new Date(Date.now() + 86_400_000).toISOString(), reason: 'Waiting for the courier' },
  })),
  onConversations('note', 'distinct', 201, (id, _i, tenant) => ({
    method: 'POST',
    path: `/api/conversations/${id}/notes`,
    token: tenant.session,
    body: { content: 'Customer called twice about this.' },
  })),
  onConversations('note', 'one conversation', 201, (id, i, tenant) => ({
    method: 'POST',
    path: `/api/conversations/${id}/notes`,
    token: tenant.session,
    body: { content: `Note ${i + 1}` },
  })),
  onConversations('mark read (1 unread)', 'distinct', 200, (id, _i, tenant) => ({
    method: 'POST',
    path: `/api/conversations/${id}/read`,
    token: tenant.apiKey,
  })),
];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Until nothing has been written for `idleMs` (the stream's workers have done what they were
 * given), at most `capMs`.
 */
export async function quiet(ledger: Ledger, idleMs = 1_500, capMs = 20_000): Promise<void> {
  const started = Date.now();
  while (Date.now() - started < capMs) {
    const last = Math.max(ledger.snapshot().lastWriteMs, started);
    if (Date.now() - last >= idleMs) return;
    await sleep(200);
  }
}

/**
 * One write `calls.length` times, one after another: the ledger as the last answer came (the
 * stream's workers held, so that is the requests' own) and once the workers had caught up.
 */
export async function measureWrite(
  stack: LocalStack,
  ledger: Ledger,
  scenario: Scenario,
  calls: Call[],
): Promise<WriteFigure> {
  await quiet(ledger);
  stack.pauseWorkers();
  ledger.reset();
  const statuses: Record<string, number> = {};
  const latenciesMs: number[] = [];
  let failure: string | undefined;
  let path: LedgerSnapshot;
  try {
    for (const call of calls) {
      const answer = await send(stack.baseUrl, call);
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
      latenciesMs.push(answer.ms);
      if (answer.status !== scenario.status && !failure)
        failure = `${call.method} ${call.path}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`;
    }
    path = ledger.snapshot();
  } finally {
    stack.resumeWorkers();
  }
  await quiet(ledger);
  const total = ledger.snapshot();
  return writeFigure({
    write: scenario.write,
    pattern: scenario.pattern,
    requests: calls.length,
    path,
    total,
    statuses,
    latenciesMs,
    failure,
  });
}
