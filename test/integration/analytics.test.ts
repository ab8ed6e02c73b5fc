import { beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { useInProcessStack } from '../helpers/in-process-stack';

/**
 * CSAT analytics and the analytics export against a recount done here. A month is seeded by moving
 * the service's clock (this file runs its own in-process stack): conversations started, answered,
 * closed by PATCH and bulk close (one closed twice), surveys given (one deleted, one of a deleted
 * conversation), two operators. Every write is entered in a ledger as it happens, and the figures
 * the API answers must equal the ledger's.
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
  time.reset();
  time.advance(Date.parse(`${addDays(today, -daysAgo)}T12:00:00.000Z`) + minutes * 60_000 - Date.now());
}

interface DayLedger {
  created: number;
  closed: number;
  visitorMessages: number;
  operatorMessages: number;
  firstResponsesMs: number[];
  /** Active responses only: deleting one removes it here. */
  surveys: Map<string, { score: number; operatorId: string | null }>;
}

const ledger = new Map<string, DayLedger>();
function on(day: string): DayLedger {
  let entry = ledger.get(day);
  if (!entry) {
    entry = {
      created: 0,
      closed: 0,
      visitorMessages: 0,
      operatorMessages: 0,
      firstResponsesMs: [],
      surveys: new Map(),
    };
    ledger.set(day, entry);
  }
  return entry;
}

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
async function play(step: Plan): Promise<{ surveyId?: string; conversationId: string; surveyDay?: string }> {
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
  on(dayOf(started.createdAt)).created++;
  on(dayOf(started.createdAt)).visitorMessages++;
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
  on(dayOf(again.createdAt)).visitorMessages++;
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
      on(dayOf(reply.createdAt)).operatorMessages++;
      if (i === 0)
        on(dayOf(reply.createdAt)).firstResponsesMs.push(
          Date.parse(reply.createdAt) - Date.parse(started.createdAt),
        );
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
    on(dayOf(closed.updatedAt)).closed++;
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
      on(dayOf(closedAgain.updatedAt)).closed++;
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
    on(dayOf(closed.updatedAt)).closed++;
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
  on(dayOf(survey.createdAt)).surveys.set(survey.id, { score: step.score, operatorId });
  return { surveyId: survey.id, conversationId: id, surveyDay: dayOf(survey.createdAt) };
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
  const responses = window.flatMap((day) => [...(ledger.get(day)?.surveys.values() ?? [])]);
  const closed = window.reduce((sum, day) => sum + (ledger.get(day)?.closed ?? 0), 0);
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
      const scores = [...(ledger.get(date)?.surveys.values() ?? [])].map((r) => r.score);
      return {
        date,
        averageScore: scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : null,
        responses: scores.length,
      };
    }),
  };
}

/** CSV text → rows of cells (the export quotes nothing it writes). */
const parseCsv = (text: string) =>
  text
    .split('\r\n')
    .filter((line) => line !== '')
    .map((line) => line.split(','));

beforeAll(async () => {
  [tenant, other] = await Promise.all([createTenant(), createTenant()]);
  const played = [];
  for (const step of plan) played.push({ step, ...(await play(step)) });
  pinAt(0, 300);
  for (const { step, surveyId, surveyDay } of played) {
    if (step.deleteSurvey && surveyId && surveyDay) {
      ok(await call('DELETE', `/api/surveys/${surveyId}`, { token: tenant.apiKey }), 200, 'delete survey');
      ledger.get(surveyDay)?.surveys.delete(surveyId);
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
  for (const { surveyId, surveyDay } of doomed)
    if (surveyId && surveyDay) ledger.get(surveyDay)?.surveys.delete(surveyId);
}, 120_000);

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

/** The true median lies in (previous bound, reported bound]: what the histogram promises. */
const BOUNDS = [
  30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000,
  86_400_000, 172_800_000,
];

describe('GET /api/export/analytics', () => {
  it('answers a CSV attachment of metric,value,period_start,period_end for the 30 days ending today', async () => {
    pinAt(0, 300);

    const response = await call('GET', '/api/export/analytics', { token: tenant.apiKey });

    expect(response.status, response.text).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(response.headers.get('content-disposition')).toMatch(
      /^attachment; filename="analytics_[\d-]+_[\d-]+\.csv"$/,
    );
    const [header, ...rows] = parseCsv(response.text);
    expect(header).toEqual(['metric', 'value', 'period_start', 'period_end']);
    const first = addDays(today, -29);
    const window = rows.filter(
      ([, , start, end]) => start === midnight(first) && end === midnight(addDays(today, 1)),
    );
    const figure = (name: string) => window.find(([metric]) => metric === name)?.[1];
    const days = Array.from({ length: 30 }, (_, i) => addDays(first, i));
    const sum = (pick: (day: DayLedger) => number) =>
      days.reduce((total, day) => total + (ledger.has(day) ? pick(on(day)) : 0), 0);
    const times = days.flatMap((day) => ledger.get(day)?.firstResponsesMs ?? []).sort((a, b) => a - b);
    const responses = days.flatMap((day) => [...(ledger.get(day)?.surveys.values() ?? [])]);

    expect(figure('conversations_created')).toBe(String(sum((d) => d.created)));
    expect(figure('conversations_closed')).toBe(String(sum((d) => d.closed)));
    expect(figure('messages_from_visitors')).toBe(String(sum((d) => d.visitorMessages)));
    expect(figure('messages_from_operators')).toBe(String(sum((d) => d.operatorMessages)));
    expect(figure('messages_total')).toBe(String(sum((d) => d.visitorMessages + d.operatorMessages)));
    expect(figure('first_responses')).toBe(String(times.length));
    expect(Number(figure('first_response_time_mean_ms'))).toBeCloseTo(
      times.reduce((a, b) => a + b, 0) / times.length,
      6,
    );
    const median = Number(figure('first_response_time_median_ms'));
    const trueMedian = times[Math.ceil(times.length / 2) - 1] ?? Number.NaN;
    const bound = BOUNDS.indexOf(median);
    expect(bound).toBeGreaterThanOrEqual(0);
    expect(trueMedian).toBeLessThanOrEqual(median);
    expect(trueMedian).toBeGreaterThan(BOUNDS[bound - 1] ?? 0);
    expect(figure('csat_responses')).toBe(String(responses.length));
    expect(Number(figure('csat_average_score'))).toBeCloseTo(
      responses.reduce((a, r) => a + r.score, 0) / responses.length,
      10,
    );
    expect(Number(figure('csat_response_rate'))).toBeCloseTo(responses.length / sum((d) => d.closed), 10);
    for (const score of [1, 2, 3, 4, 5])
      expect(figure(`csat_score_${score}`)).toBe(String(responses.filter((r) => r.score === score).length));
    // Then each day of the window, with the same metrics.
    for (const day of days) {
      const dayRows = rows.filter(
        ([, , start, end]) => start === midnight(day) && end === midnight(addDays(day, 1)),
      );
      expect(dayRows.map(([metric]) => metric)).toEqual(window.map(([metric]) => metric));
      const created = dayRows.find(([metric]) => metric === 'conversations_created')?.[1];
      expect(created, day).toBe(String(ledger.get(day)?.created ?? 0));
    }
    expect(rows).toHaveLength(window.length * 31);
  });

  it('covers the whole days date_from and date_to fall in, and keeps empty means empty', async () => {
    pinAt(0, 300);
    const from = addDays(today, -40);
    const to = addDays(today, -20);

    const response = await call(
      'GET',
      `/api/export/analytics?format=csv&date_from=${from}T18:30:00Z&date_to=${to}T01:00:00.000%2B02:00`,
      { token: tenant.apiKey },
    );

    expect(response.status, response.text).toBe(200);
    const rows = parseCsv(response.text).slice(1);
    // The last instant is 23:00 the day before `to`, in UTC.
    const last = addDays(to, -1);
    const window = rows.filter(
      ([, , start, end]) => start === midnight(from) && end === midnight(addDays(last, 1)),
    );
    const days = Array.from({ length: 20 }, (_, i) => addDays(from, i));
    const created = days.reduce((total, day) => total + (ledger.get(day)?.created ?? 0), 0);
    expect(window.find(([metric]) => metric === 'conversations_created')?.[1]).toBe(String(created));
    expect(created).toBe(3);
    const quiet = rows.filter(([, , start]) => start === midnight(addDays(from, 1)));
    expect(Object.fromEntries(quiet.map(([metric, value]) => [metric, value]))).toMatchObject({
      conversations_created: '0',
      first_response_time_mean_ms: '',
      first_response_time_median_ms: '',
      csat_average_score: '',
      csat_response_rate: '0',
    });
  });

  it('refuses a reversed window, one over 366 days, a malformed date and any format but csv', async () => {
    pinAt(0, 300);
    const cases: [string, string][] = [
      ['date_from=2026-03-02&date_to=2026-03-01', 'date_from'],
      ['date_from=2024-01-01&date_to=2025-01-02', 'date_from'],
      ['date_from=yesterday', 'date_from'],
      ['date_to=2026-13-01', 'date_to'],
      ['format=json', 'format'],
    ];
    for (const [query, field] of cases) {
      const response = await call<{ error: { details: { field: string } } }>(
        'GET',
        `/api/export/analytics?${query}`,
        { token: tenant.apiKey },
      );
      expect(response.status, `${query}: ${response.text}`).toBe(422);
      expect(response.body.error.details.field).toBe(field);
    }
    const fullYear = await call('GET', '/api/export/analytics?date_from=2024-01-01&date_to=2024-12-31', {
      token: tenant.apiKey,
    });
    expect(fullYear.status).toBe(200);
  });

  it('shows another organization only zeros', async () => {
    pinAt(0, 300);
    const response = await call('GET', '/api/export/analytics', { token: other.apiKey });

    const values = parseCsv(response.text)
      .slice(1)
      .map(([, value]) => value);
    expect(values.every((value) => value === '0' || value === '')).toBe(true);
  });
});

describe('counters under concurrent writers', () => {
  it('count every message when many conversations are written at once (8 shards a day, conflicts retried)', async () => {
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
    const csv = await call('GET', `/api/export/analytics?date_from=${today}&date_to=${today}`, {
      token: owner.apiKey,
    });
    const figures = Object.fromEntries(
      parseCsv(csv.text)
        .slice(1, 17)
        .map(([metric, value]) => [metric, value]),
    );
    expect(figures).toMatchObject({ conversations_created: '48', messages_from_visitors: '96' });
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
    const csv = await call('GET', `/api/export/analytics?date_from=${today}&date_to=${today}`, {
      token: owner.apiKey,
    });
    const figures = Object.fromEntries(
      parseCsv(csv.text)
        .slice(1, 17)
        .map(([metric, value]) => [metric, value]),
    );
    // The repeat closes nothing more.
    expect(figures).toMatchObject({
      conversations_created: '40',
      conversations_closed: '40',
      messages_total: '0',
    });
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
    const before = ok(
      await call<Csat>('GET', '/api/analytics/csat?period=90d', { token: owner.apiKey }),
      200,
      'csat',
    );

    const deleted = await call<{ deleted: number }>('POST', '/api/conversations/bulk-delete', {
      token: owner.apiKey,
      body: { conversationIds: ids },
    });

    expect(before.totalResponses).toBe(35);
    expect(before.byOperator.map((operator) => operator.responses).sort()).toEqual([17, 18]);
    expect(deleted.body.deleted).toBe(35);
    const after = ok(
      await call<Csat>('GET', '/api/analytics/csat?period=90d', { token: owner.apiKey }),
      200,
      'csat',
    );
    expect(after).toMatchObject({ totalResponses: 0, averageScore: null, byOperator: [], responseRate: 0 });
    expect(after.daily.every((day) => day.responses === 0)).toBe(true);
  });
});
