import { isDeepStrictEqual } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { clock } from '../../shared/clock';
import { call, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { eventually } from '../helpers/eventually';
import { useInProcessStack } from '../helpers/in-process-stack';

/**
 * CSAT analytics and the analytics export against a recount done here. A month is seeded by moving
 * the service's clock (this file runs its own in-process stack): conversations started, answered,
 * closed by PATCH and bulk close (one closed twice), surveys given (one deleted, one of a deleted
 * conversation), two operators. Every write is entered in a ledger with the instant the API gave it,
 * and the figures the API answers must equal the ledger's for the exact period they name.
 */
const time = useInProcessStack();

const DAY_MS = 86_400_000;
const dayOf = (iso: string) => iso.slice(0, 10);
const addDays = (day: string, count: number) =>
  new Date(Date.parse(`${day}T00:00:00.000Z`) + count * DAY_MS).toISOString().slice(0, 10);
const midnight = (day: string) => `${day}T00:00:00.000Z`;

/** The service's "today" for this file: the day the tests started (events are pinned to it). */
const today = dayOf(new Date().toISOString());

/** Moves the service's clock to `daysAgo` days before today, at noon plus `minutes`. */
function pinAt(daysAgo: number, minutes = 0): void {
  pinTo(`${addDays(today, -daysAgo)}T12:00:00.000Z`, minutes * 60_000);
}

/** Moves the service's clock to `iso` (plus `ms`); it runs on from there. */
function pinTo(iso: string, ms = 0): void {
  time.reset();
  time.advance(Date.parse(iso) + ms - Date.now());
}

/** What happened in one organization, at the instants the API reported. */
class Ledger {
  readonly happenings: { at: number; kind: 'created' | 'closed' | 'visitor' | 'operator' }[] = [];
  readonly firstResponses: { at: number; ms: number }[] = [];
  /** Active responses only: deleting one (or its conversation) removes it here. */
  readonly responses = new Map<string, { at: number; score: number; operatorId: string | null }>();

  note(kind: 'created' | 'closed' | 'visitor' | 'operator', iso: string): void {
    this.happenings.push({ at: Date.parse(iso), kind });
  }
}

const ledger = new Ledger();

function ok<T>(response: { status: number; text: string; body: T }, status: number, what: string): T {
  if (response.status !== status) throw new Error(`${what}: ${response.status} ${response.text}`);
  return response.body;
}

let tenant: Tenant;
let other: Tenant;

interface Plan {
  daysAgo: number;
  operator: 'A' | 'B' | null;
  /** Minutes until the first operator answer (none: never answered). */
  replyAfter: number | null;
  close: 'patch' | 'bulk' | 'patch-twice' | null;
  score: number | null;
  deleteSurvey?: boolean;
  deleteConversation?: boolean;
}

const plan: Plan[] = [
  { daysAgo: 40, operator: 'A', replyAfter: 3, close: 'patch', score: 5 },
  { daysAgo: 25, operator: 'A', replyAfter: 1, close: 'patch', score: 4 },
  { daysAgo: 25, operator: 'B', replyAfter: 12, close: 'bulk', score: 2 },
  { daysAgo: 20, operator: 'B', replyAfter: 45, close: 'bulk', score: 3 },
  { daysAgo: 12, operator: null, replyAfter: null, close: 'patch-twice', score: 5 },
  { daysAgo: 6, operator: 'A', replyAfter: 0.2, close: 'bulk', score: 1, deleteSurvey: true },
  { daysAgo: 5, operator: 'A', replyAfter: 150, close: 'patch', score: 4 },
  { daysAgo: 2, operator: 'B', replyAfter: 5, close: null, score: 5 },
  { daysAgo: 1, operator: 'B', replyAfter: 7, close: 'patch', score: 3, deleteConversation: true },
  { daysAgo: 0, operator: 'A', replyAfter: 2, close: 'bulk', score: null },
];

/** Plays one conversation of the plan through the API, entering each write in the ledger. */
async function play(step: Plan): Promise<{ surveyId?: string; conversationId: string }> {
  const operatorId =
    step.operator === 'A' ? tenant.operatorId : step.operator === 'B' ? tenant.adminOperatorId : null;
  pinAt(step.daysAgo);
  const visitor = await createVisitor(tenant.widgetKey);
  const started = ok(
    await call<{ id: string; createdAt: string }>('POST', '/api/conversations', {
      token: visitor.token,
      body: { message: 'Where is my parcel?' },
    }),
    201,
    'start',
  );
  const id = started.id;
  ledger.note('created', started.createdAt);
  ledger.note('visitor', started.createdAt);
  if (operatorId) {
    pinAt(step.daysAgo, 1);
    ok(
      await call('PATCH', `/api/conversations/${id}`, { token: tenant.apiKey, body: { operatorId } }),
      200,
      'assign',
    );
  }
  pinAt(step.daysAgo, 1.5);
  const again = ok(
    await call<{ createdAt: string }>('POST', `/api/conversations/${id}/messages`, {
      token: visitor.token,
      body: { content: 'Hello?' },
    }),
    201,
    'visitor message',
  );
  ledger.note('visitor', again.createdAt);
  if (step.replyAfter !== null) {
    for (const [i, content] of ['On its way', 'Anything else?'].entries()) {
      pinAt(step.daysAgo, step.replyAfter + i);
      const reply = ok(
        await call<{ createdAt: string }>('POST', `/api/conversations/${id}/messages`, {
          token: tenant.apiKey,
          body: { content, operatorId: operatorId ?? tenant.operatorId },
        }),
        201,
        'operator message',
      );
      ledger.note('operator', reply.createdAt);
      if (i === 0)
        ledger.firstResponses.push({
          at: Date.parse(reply.createdAt),
          ms: Date.parse(reply.createdAt) - Date.parse(started.createdAt),
        });
    }
  }
  pinAt(step.daysAgo, 200);
  if (step.close === 'patch' || step.close === 'patch-twice') {
    const closed = ok(
      await call<{ updatedAt: string }>('PATCH', `/api/conversations/${id}`, {
        token: tenant.apiKey,
        body: { status: 'closed' },
      }),
      200,
      'close',
    );
    ledger.note('closed', closed.updatedAt);
    if (step.close === 'patch-twice') {
      ok(
        await call('PATCH', `/api/conversations/${id}`, { token: tenant.apiKey, body: { status: 'open' } }),
        200,
        'reopen',
      );
      const closedAgain = ok(
        await call<{ updatedAt: string }>('PATCH', `/api/conversations/${id}`, {
          token: tenant.apiKey,
          body: { status: 'closed' },
        }),
        200,
        'close again',
      );
      ledger.note('closed', closedAgain.updatedAt);
    }
  }
  if (step.close === 'bulk') {
    ok(
      await call('POST', '/api/conversations/bulk-close', {
        token: tenant.apiKey,
        body: { conversationIds: [id] },
      }),
      200,
      'bulk close',
    );
    const closed = ok(
      await call<{ updatedAt: string }>('GET', `/api/conversations/${id}`, { token: tenant.apiKey }),
      200,
      'read',
    );
    ledger.note('closed', closed.updatedAt);
  }
  if (step.score === null) return { conversationId: id };
  pinAt(step.daysAgo, 220);
  const survey = ok(
    await call<{ id: string; createdAt: string; operatorId: string | null }>('POST', '/api/surveys', {
      token: visitor.token,
      body: { conversationId: id, score: step.score, comment: 'Thanks' },
    }),
    201,
    'survey',
  );
  expect(survey.operatorId).toBe(operatorId);
  ledger.responses.set(survey.id, { at: Date.parse(survey.createdAt), score: step.score, operatorId });
  return { surveyId: survey.id, conversationId: id };
}

type Csat = {
  period: string;
  averageScore: number | null;
  totalResponses: number;
  responseRate: number;
  distribution: Record<string, number>;
  byOperator: { operatorId: string; averageScore: number; responses: number }[];
  daily: { date: string; averageScore: number | null; responses: number }[];
};

/** What the ledger says CSAT over the last `days` days is. */
function recount(days: number): Omit<Csat, 'period'> {
  const window = Array.from({ length: days }, (_, i) => addDays(today, i - days + 1));
  const inWindow = (at: number) => window.includes(dayOf(new Date(at).toISOString()));
  const responses = [...ledger.responses.values()].filter((response) => inWindow(response.at));
  const closed = ledger.happenings.filter((entry) => entry.kind === 'closed' && inWindow(entry.at)).length;
  const sum = responses.reduce((total, response) => total + response.score, 0);
  const operators = new Map<string, number[]>();
  for (const response of responses)
    if (response.operatorId)
      operators.set(response.operatorId, [...(operators.get(response.operatorId) ?? []), response.score]);
  return {
    averageScore: responses.length ? sum / responses.length : null,
    totalResponses: responses.length,
    responseRate: closed ? Math.min(1, responses.length / closed) : 0,
    distribution: Object.fromEntries(
      [1, 2, 3, 4, 5].map((score) => [String(score), responses.filter((r) => r.score === score).length]),
    ),
    byOperator: [...operators]
      .map(([operatorId, scores]) => ({
        operatorId,
        averageScore: scores.reduce((a, b) => a + b, 0) / scores.length,
        responses: scores.length,
      }))
      .sort((a, b) => b.responses - a.responses || a.operatorId.localeCompare(b.operatorId)),
    daily: window.map((date) => {
      const scores = responses
        .filter((r) => dayOf(new Date(r.at).toISOString()) === date)
        .map((r) => r.score);
      return {
        date,
        averageScore: scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : null,
        responses: scores.length,
      };
    }),
  };
}

/** The true median lies in (previous bound, reported bound]: the histogram's bucket bounds. */
const BOUNDS = [
  30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000,
  86_400_000, 172_800_000,
];

/** What the ledger says every metric of the export is for [from, to), as CSV cells. */
function expectedFigures(book: Ledger, from: number, to: number): Record<string, string> {
  const inside = (at: number) => at >= from && at < to;
  const count = (kind: string) =>
    book.happenings.filter((entry) => entry.kind === kind && inside(entry.at)).length;
  const times = book.firstResponses
    .filter((entry) => inside(entry.at))
    .map((entry) => entry.ms)
    .sort((a, b) => a - b);
  const middle = times[Math.ceil(times.length / 2) - 1];
  const responses = [...book.responses.values()].filter((response) => inside(response.at));
  const closed = count('closed');
  const scoreSum = responses.reduce((total, response) => total + response.score, 0);
  const cell = (value: number | null) => (value === null ? '' : String(value));
  return {
    conversations_created: cell(count('created')),
    conversations_closed: cell(closed),
    messages_total: cell(count('visitor') + count('operator')),
    messages_from_visitors: cell(count('visitor')),
    messages_from_operators: cell(count('operator')),
    first_responses: cell(times.length),
    first_response_time_mean_ms: cell(times.length ? times.reduce((a, b) => a + b, 0) / times.length : null),
    first_response_time_median_ms: cell(
      middle === undefined ? null : (BOUNDS.find((bound) => middle <= bound) ?? 172_800_000),
    ),
    csat_responses: cell(responses.length),
    csat_average_score: cell(responses.length ? scoreSum / responses.length : null),
    csat_response_rate: cell(closed ? Math.min(1, responses.length / closed) : 0),
    ...Object.fromEntries(
      [1, 2, 3, 4, 5].map((score) => [
        `csat_score_${score}`,
        cell(responses.filter((response) => response.score === score).length),
      ]),
    ),
  };
}

beforeAll(async () => {
  [tenant, other] = await Promise.all([createTenant(), createTenant()]);
  const played = [];
  for (const step of plan) played.push({ step, ...(await play(step)) });
  pinAt(0, 300);
  for (const { step, surveyId } of played) {
    if (step.deleteSurvey && surveyId) {
      ok(await call('DELETE', `/api/surveys/${surveyId}`, { token: tenant.apiKey }), 200, 'delete survey');
      ledger.responses.delete(surveyId);
    }
  }
  const doomed = played.filter((entry) => entry.step.deleteConversation);
  ok(
    await call('POST', '/api/conversations/bulk-delete', {
      token: tenant.apiKey,
      body: { conversationIds: doomed.map((entry) => entry.conversationId) },
    }),
    200,
    'bulk delete',
  );
  // Surveys of deleted conversations no longer count; their closures and messages happened.
  for (const { surveyId } of doomed) if (surveyId) ledger.responses.delete(surveyId);
  // The day counters are counted from the table's stream: wait until it has caught up with the month.
  const expected = { period: '90d', ...recount(90) };
  const caughtUp = await eventually(
    () => call<Csat>('GET', '/api/analytics/csat?period=90d', { token: tenant.apiKey }),
    (response) => isDeepStrictEqual(response.body, expected),
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  expect(caughtUp.body).toEqual(expected);
}, 180_000);

describe('GET /api/analytics/csat', () => {
  it.each([
    ['7d', 7],
    ['30d', 30],
    ['90d', 90],
  ])('answers the recount of a seeded month for %s', async (period, days) => {
    pinAt(0, 300);

    const response = await call<Csat>('GET', `/api/analytics/csat?period=${period}`, {
      token: tenant.apiKey,
    });

    expect(response.status, response.text).toBe(200);
    const expected = recount(days);
    expect(response.body).toEqual({ period, ...expected });
    expect(response.body.totalResponses).toBeGreaterThan(0);
  });

  it('defaults to 30d, and refuses any other period naming it', async () => {
    pinAt(0, 300);
    const defaulted = await call<Csat>('GET', '/api/analytics/csat', { token: tenant.apiKey });
    const refused = await Promise.all(
      ['1y', '30', '7D', ''].map((period) =>
        call<{ error: { code: string; details: { field: string } } }>(
          'GET',
          `/api/analytics/csat?period=${period}`,
          {
            token: tenant.apiKey,
          },
        ),
      ),
    );

    expect(defaulted.status).toBe(200);
    expect(defaulted.body).toEqual({ period: '30d', ...recount(30) });
    for (const response of refused) {
      expect(response.status, response.text).toBe(422);
      expect(response.body.error.details.field).toBe('period');
    }
  });

  it('shows another organization nothing of these figures', async () => {
    pinAt(0, 300);
    const response = await call<Csat>('GET', '/api/analytics/csat?period=90d', { token: other.apiKey });

    expect(response.body).toMatchObject({
      averageScore: null,
      totalResponses: 0,
      responseRate: 0,
      distribution: { '1': 0, '2': 0, '3': 0, '4': 0, '5': 0 },
      byOperator: [],
    });
    expect(response.body.daily).toHaveLength(90);
  });
});

/** CSV text → rows of cells (the export quotes nothing it writes). */
const parseCsv = (text: string) =>
  text
    .split('\r\n')
    .filter((line) => line !== '')
    .map((line) => line.split(','));

const METRICS = 16;

/** One export, checked to be a CSV attachment; its rows, header left out. */
async function exportRows(token: string, query = ''): Promise<string[][]> {
  const response = await call('GET', `/api/export/analytics${query}`, { token });
  expect(response.status, response.text).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
  expect(response.headers.get('content-disposition')).toMatch(
    /^attachment; filename="analytics_[\d-]+_[\d-]+\.csv"$/,
  );
  const [header, ...rows] = parseCsv(response.text);
  expect(header).toEqual(['metric', 'value', 'period_start', 'period_end']);
  return rows;
}

/** The rows of each period, in order: `[start, end, metric → value]`. */
function periodsOf(rows: string[][]): { start: string; end: string; figures: Record<string, string> }[] {
  const periods = [];
  for (let i = 0; i < rows.length; i += METRICS) {
    const chunk = rows.slice(i, i + METRICS);
    const [, , start = '', end = ''] = chunk[0] ?? [];
    expect(chunk.every(([, , s, e]) => s === start && e === end)).toBe(true);
    periods.push({
      start,
      end,
      figures: Object.fromEntries(chunk.map(([metric, value]) => [metric, value])),
    });
  }
  return periods;
}

const ms = (iso: string) => Date.parse(iso);
const isoOf = (value: number) => new Date(value).toISOString();

describe('GET /api/export/analytics', () => {
  it('answers, by default, one row per metric for request time − 30 days .. request time, to the ms, counting exactly that', async () => {
    pinAt(0, 300);
    const before = clock.nowMs();

    const rows = await exportRows(tenant.apiKey);

    const after = clock.nowMs();
    // No per-day rows without `granularity`.
    expect(rows).toHaveLength(METRICS);
    const [window] = periodsOf(rows);
    if (!window) throw new Error('no rows');
    expect(window.end).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(ms(window.end)).toBeGreaterThanOrEqual(before);
    expect(ms(window.end)).toBeLessThanOrEqual(after);
    expect(ms(window.end) - ms(window.start)).toBe(30 * DAY_MS);
    expect(window.figures).toEqual(expectedFigures(ledger, ms(window.start), ms(window.end)));
    // The seeded month is in it: answered, closed and rated conversations, today's among them.
    expect(Number(window.figures.first_responses)).toBeGreaterThan(3);
    expect(Number(window.figures.csat_responses)).toBeGreaterThan(2);
  });

  it('adds with granularity=day, after the window, each UTC day with its recount, the first and last cut', async () => {
    pinAt(0, 300);

    const periods = periodsOf(await exportRows(tenant.apiKey, '?granularity=day'));

    const [window, ...days] = periods;
    if (!window) throw new Error('no rows');
    const first = dayOf(window.start);
    expect(days).toHaveLength(31);
    expect(days.map(({ start, end }) => [start, end])).toEqual(
      Array.from({ length: 31 }, (_, i) => [
        i === 0 ? window.start : midnight(addDays(first, i)),
        i === 30 ? window.end : midnight(addDays(first, i + 1)),
      ]),
    );
    for (const day of days)
      expect(day.figures, day.start).toEqual(expectedFigures(ledger, ms(day.start), ms(day.end)));
    expect(days.at(-1)?.figures.conversations_created).toBe('1');
  });

  describe('at the edges of the window', () => {
    const edges = new Ledger();
    let org: Tenant;
    const first = addDays(today, -4);
    const last = addDays(today, -2);
    const at = (day: string, clockTime: string) => `${day}T${clockTime}Z`;
    const marks: Record<string, string> = {};

    async function start(name: string, when: string, visitorId: string): Promise<string> {
      pinTo(when);
      const started = ok(
        await call<{ id: string; createdAt: string }>('POST', '/api/conversations', {
          token: org.apiKey,
          body: { visitorId, message: 'Where is my parcel?' },
        }),
        201,
        'start',
      );
      edges.note('created', started.createdAt);
      edges.note('visitor', started.createdAt);
      marks[name] = started.createdAt;
      return started.id;
    }
    async function reply(id: string, when: string, startedAt: string): Promise<void> {
      pinTo(when);
      const sent = ok(
        await call<{ createdAt: string }>('POST', `/api/conversations/${id}/messages`, {
          token: org.apiKey,
          body: { content: 'On its way', operatorId: org.operatorId },
        }),
        201,
        'reply',
      );
      edges.note('operator', sent.createdAt);
      edges.firstResponses.push({ at: ms(sent.createdAt), ms: ms(sent.createdAt) - ms(startedAt) });
    }
    async function close(id: string, when: string): Promise<void> {
      pinTo(when);
      const closed = ok(
        await call<{ updatedAt: string }>('PATCH', `/api/conversations/${id}`, {
          token: org.apiKey,
          body: { status: 'closed' },
        }),
        200,
        'close',
      );
      edges.note('closed', closed.updatedAt);
    }
    async function rate(
      name: string,
      id: string,
      visitorId: string,
      when: string,
      score: number,
    ): Promise<string> {
      pinTo(when);
      const given = ok(
        await call<{ id: string; createdAt: string }>('POST', '/api/surveys', {
          token: org.apiKey,
          body: { conversationId: id, visitorId, score },
        }),
        201,
        'survey',
      );
      edges.responses.set(given.id, { at: ms(given.createdAt), score, operatorId: null });
      marks[name] = given.createdAt;
      return given.id;
    }

    beforeAll(async () => {
      org = await createTenant();
      const visitorId = (await createVisitor(org.widgetKey)).visitor.id;
      // Before date_from (09:59), answered after it: only its first response is in the window.
      const a = await start('a', at(first, '09:59:58.000'), visitorId);
      await reply(a, at(first, '10:00:10.000'), marks.a ?? '');
      // Wholly before date_from: its closure and response come off the day's counters.
      const g = await start('g', at(first, '09:00:00.000'), visitorId);
      await close(g, at(first, '09:01:00.000'));
      await rate('gRated', g, visitorId, at(first, '09:02:00.000'), 1);
      const b = await start('b', at(first, '10:00:00.000'), visitorId);
      await reply(b, at(first, '10:02:00.000'), marks.b ?? '');
      await close(b, at(first, '10:05:00.000'));
      await rate('bRated', b, visitorId, at(first, '10:06:00.000'), 4);
      const c = await start('c', at(first, '10:07:00.000'), visitorId);
      await close(c, at(first, '10:08:00.000'));
      const cRated = await rate('cRated', c, visitorId, at(first, '10:09:00.000'), 2);
      const f = await start('f', at(first, '10:10:00.000'), visitorId);
      await close(f, at(first, '10:11:00.000'));
      const fRated = await rate('fRated', f, visitorId, at(first, '10:12:00.000'), 5);
      await start('h', at(addDays(first, 1), '12:00:00.000'), visitorId);
      await start('i', at(last, '14:59:58.000'), visitorId);
      await start('j', at(last, '15:00:00.000'), visitorId);
      const k = await start('k', at(last, '16:00:00.000'), visitorId);
      await close(k, at(last, '16:01:00.000'));
      await rate('kRated', k, visitorId, at(last, '16:02:00.000'), 3);
      pinAt(0, 300);
      // A deleted response, and the response of a deleted conversation, no longer count.
      ok(await call('DELETE', `/api/surveys/${fRated}`, { token: org.apiKey }), 200, 'delete survey');
      edges.responses.delete(fRated);
      ok(
        await call('POST', '/api/conversations/bulk-delete', {
          token: org.apiKey,
          body: { conversationIds: [c] },
        }),
        200,
        'delete conversation',
      );
      edges.responses.delete(cRated);
    }, 60_000);

    it('reports date_from at 10:00 as 10:00: what came at 09:59 is out, what came at 10:00 is in; date_to is excluded', async () => {
      pinAt(0, 300);
      const from = at(first, '10:00:00.000');
      const to = at(last, '15:00:00.000');

      const counted = (period: { start: string; end: string; figures: Record<string, string> }) =>
        isDeepStrictEqual(period.figures, expectedFigures(edges, ms(period.start), ms(period.end)));
      // The day counters are counted from the table's stream, and survey responses read from their
      // by-time index, which may show the responses just given up to 2 s late (the contract): read
      // until both have caught up (a loaded machine delays the stream by seconds).
      const periods = await eventually(
        async () =>
          periodsOf(
            await exportRows(
              org.apiKey,
              `?date_from=${first}T10:00:00Z&date_to=${last}T15:00:00.000%2B00:00&granularity=day`,
            ),
          ),
        (read) => read.length > 0 && read.every(counted),
        { timeoutMs: 30_000, intervalMs: 250 },
      );

      expect(periods.map(({ start, end }) => [start, end])).toEqual([
        [from, to],
        [from, midnight(addDays(first, 1))],
        [midnight(addDays(first, 1)), midnight(last)],
        [midnight(last), to],
      ]);
      for (const period of periods)
        expect(period.figures, period.start).toEqual(
          expectedFigures(edges, ms(period.start), ms(period.end)),
        );
      // b, c, f (10:00 and after), h, i (14:59); not a (09:59) nor j (15:00).
      expect(periods[0]?.figures).toMatchObject({
        conversations_created: '5',
        conversations_closed: '3',
        first_responses: '2',
        csat_responses: '1',
        csat_score_4: '1',
        csat_response_rate: String(1 / 3),
      });
    });

    it('counts from date_from’s very millisecond, and up to date_to’s, excluded', async () => {
      pinAt(0, 300);
      const exact = async (from: string, to: string) => {
        const [window] = periodsOf(await exportRows(org.apiKey, `?date_from=${from}&date_to=${to}`));
        expect(window?.start).toBe(from);
        expect(window?.end).toBe(to);
        expect(window?.figures).toEqual(expectedFigures(edges, ms(from), ms(to)));
        return window?.figures ?? {};
      };
      const b = marks.b ?? '';
      const bRated = marks.bRated ?? '';
      const dayAfter = midnight(addDays(first, 1));

      // A few minutes: read item by item.
      expect((await exact(b, bRated)).csat_responses).toBe('0');
      expect((await exact(b, isoOf(ms(bRated) + 1))).csat_responses).toBe('1');
      expect((await exact(b, bRated)).conversations_created).toBe('1');
      expect((await exact(isoOf(ms(b) + 1), bRated)).conversations_created).toBe('0');
      // Responses of a deleted conversation (c) and deleted ones (f) are not counted.
      expect((await exact(b, isoOf(ms(marks.fRated ?? '') + 1))).csat_responses).toBe('1');
      // Most of a past day: its counters less the items before date_from, which they already
      // count without c's response.
      expect((await exact(b, dayAfter)).conversations_created).toBe('3');
      expect((await exact(isoOf(ms(b) + 1), dayAfter)).conversations_created).toBe('2');
      expect((await exact(isoOf(ms(marks.cRated ?? '') + 1), dayAfter)).csat_responses).toBe('0');
    });

    it('takes a date as its UTC midnight', async () => {
      pinAt(0, 300);

      const [window] = periodsOf(await exportRows(org.apiKey, `?date_from=${first}&date_to=${last}`));

      expect([window?.start, window?.end]).toEqual([midnight(first), midnight(last)]);
      expect(window?.figures).toEqual(expectedFigures(edges, ms(midnight(first)), ms(midnight(last))));
      expect(window?.figures.conversations_created).toBe('6');
    });
  });

  it('refuses an empty, reversed or over-366-day window, an old bound within a day, a malformed value', async () => {
    pinAt(0, 300);
    const cases: [string, string][] = [
      ['date_from=2026-03-02&date_to=2026-03-01', 'date_from'],
      ['date_from=2026-03-01&date_to=2026-03-01', 'date_from'],
      ['date_from=2024-01-01&date_to=2025-01-02', 'date_from'],
      [`date_from=${addDays(today, 1)}`, 'date_from'],
      [`date_from=${addDays(today, -40)}T10:00:00.000Z`, 'date_from'],
      [`date_from=${addDays(today, -300)}&date_to=${addDays(today, -40)}T10:00:00.000Z`, 'date_to'],
      ['date_from=yesterday', 'date_from'],
      ['date_to=2026-13-01', 'date_to'],
      ['format=json', 'format'],
      ['granularity=week', 'granularity'],
      ['granularity=', 'granularity'],
    ];
    for (const [query, field] of cases) {
      const response = await call<{ error: { code: string; details: { field: string } } }>(
        'GET',
        `/api/export/analytics?${query}`,
        { token: tenant.apiKey },
      );
      expect(response.status, `${query}: ${response.text}`).toBe(422);
      expect(response.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field } });
    }
    const leapYear = periodsOf(await exportRows(tenant.apiKey, '?date_from=2024-01-01&date_to=2025-01-01'));
    expect([leapYear[0]?.start, leapYear[0]?.end]).toEqual([midnight('2024-01-01'), midnight('2025-01-01')]);
    const yearToNow = periodsOf(
      await exportRows(tenant.apiKey, `?date_from=${addDays(today, -365)}&granularity=day`),
    );
    expect(yearToNow[0]?.start).toBe(midnight(addDays(today, -365)));
    expect(yearToNow).toHaveLength(1 + 366);
  });

  it('shows another organization only zeros', async () => {
    pinAt(0, 300);
    const values = (await exportRows(other.apiKey, '?granularity=day')).map(([, value]) => value);

    expect(values.every((value) => value === '0' || value === '')).toBe(true);
  });
});

/**
 * Today's figures of the export once they match `expected` (the day counters follow the writes from
 * the table's stream), or as they stand when the wait is over.
 */
async function todaysFigures(
  token: string,
  expected: Record<string, string>,
): Promise<Record<string, string>> {
  const read = async () => {
    const csv = await call('GET', `/api/export/analytics?date_from=${today}&date_to=${addDays(today, 1)}`, {
      token,
    });
    return Object.fromEntries(
      parseCsv(csv.text)
        .slice(1, 17)
        .map(([metric, value]) => [metric, value]),
    ) as Record<string, string>;
  };
  return eventually(
    read,
    (figures) => Object.entries(expected).every(([name, value]) => figures[name] === value),
    {
      timeoutMs: 30_000,
      intervalMs: 250,
    },
  );
}

/** The 90-day CSAT once `done` holds for it (counted from the stream), or as it stands after the wait. */
async function csatOnceCounted(token: string, done: (csat: Csat) => boolean): Promise<Csat> {
  const read = async () =>
    ok(await call<Csat>('GET', '/api/analytics/csat?period=90d', { token }), 200, 'csat');
  return eventually(read, done, { timeoutMs: 30_000, intervalMs: 250 });
}

describe('counters under concurrent writers', () => {
  it('count every message when many conversations are written at once (counted from the stream, each once)', async () => {
    pinAt(0, 450);
    const owner = await createTenant();
    const visitors = await Promise.all(Array.from({ length: 48 }, () => createVisitor(owner.widgetKey)));
    const started = await Promise.all(
      visitors.map(async (visitor) => ({
        token: visitor.token,
        id: ok(
          await call<{ id: string }>('POST', '/api/conversations', {
            token: visitor.token,
            body: { message: 'First' },
          }),
          201,
          'start',
        ).id,
      })),
    );

    // One message per conversation, all at once: they meet only on the day's counter shards.
    const posted = await Promise.all(
      started.map(({ token, id }) =>
        call('POST', `/api/conversations/${id}/messages`, { token, body: { content: 'Still there?' } }),
      ),
    );

    expect(posted.map((response) => response.status).filter((status) => status !== 201)).toEqual([]);
    const expected = { conversations_created: '48', messages_from_visitors: '96' };
    expect(await todaysFigures(owner.apiKey, expected)).toMatchObject(expected);
  });
});

describe('counters through bulk writes of many conversations', () => {
  it('bulk close of 40 conversations (two transactions) counts 40 closures', async () => {
    pinAt(0, 400);
    const owner = await createTenant();
    const visitor = await createVisitor(owner.widgetKey);
    const ids = await Promise.all(
      Array.from(
        { length: 40 },
        async () =>
          ok(
            await call<{ id: string }>('POST', '/api/conversations', {
              token: owner.apiKey,
              body: { visitorId: visitor.visitor.id },
            }),
            201,
            'create',
          ).id,
      ),
    );

    const closed = await call<{ closed: number }>('POST', '/api/conversations/bulk-close', {
      token: owner.apiKey,
      body: { conversationIds: ids },
    });
    const repeated = await call('POST', '/api/conversations/bulk-close', {
      token: owner.apiKey,
      body: { conversationIds: ids },
    });

    expect(closed.body.closed).toBe(40);
    expect(repeated.status).toBe(200);
    // The repeat closes nothing more.
    const expected = { conversations_created: '40', conversations_closed: '40', messages_total: '0' };
    expect(await todaysFigures(owner.apiKey, expected)).toMatchObject(expected);
  });

  it('bulk delete of 35 conversations with responses on 35 days and two operators removes every response', async () => {
    const owner = await createTenant();
    const ids: string[] = [];
    for (let daysAgo = 0; daysAgo < 35; daysAgo++) {
      pinAt(daysAgo, 500);
      const visitor = await createVisitor(owner.widgetKey);
      const operatorId = daysAgo % 2 ? owner.operatorId : owner.adminOperatorId;
      const started = ok(
        await call<{ id: string }>('POST', '/api/conversations', { token: visitor.token, body: {} }),
        201,
        'create',
      );
      ok(
        await call('PATCH', `/api/conversations/${started.id}`, {
          token: owner.apiKey,
          body: { operatorId, status: 'closed' },
        }),
        200,
        'assign and close',
      );
      ok(
        await call('POST', '/api/surveys', {
          token: visitor.token,
          body: { conversationId: started.id, score: 1 + (daysAgo % 5) },
        }),
        201,
        'survey',
      );
      ids.push(started.id);
    }
    pinAt(0, 500);
    const before = await csatOnceCounted(owner.apiKey, (csat) => csat.totalResponses === 35);

    const deleted = await call<{ deleted: number }>('POST', '/api/conversations/bulk-delete', {
      token: owner.apiKey,
      body: { conversationIds: ids },
    });

    expect(before.totalResponses).toBe(35);
    expect(before.byOperator.map((operator) => operator.responses).sort()).toEqual([17, 18]);
    expect(deleted.body.deleted).toBe(35);
    const after = await csatOnceCounted(owner.apiKey, (csat) => csat.totalResponses === 0);
    expect(after).toMatchObject({ totalResponses: 0, averageScore: null, byOperator: [], responseRate: 0 });
    expect(after.daily.every((day) => day.responses === 0)).toBe(true);
  });
});
