import { BatchGetCommand, DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import fc from 'fast-check';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { type DayTotals, emptyTotals, frtBucketOf } from '../../shared/analytics/counters';
import {
  type ActivityFact,
  type ConversationFacts,
  conversationFactsOf,
  factOf,
  firstResponseAt,
  tally,
} from '../../shared/analytics/tally';
import {
  COMMIT_WINDOW_MS,
  DAY_MS,
  dayFigures,
  exportWindow,
  planDays,
  type Span,
  spansToCount,
} from '../../shared/analytics/window';
import { withMessage } from '../../shared/conversations/state';
import { countSpans, PART_DAY_HORIZON_MS } from '../../shared/db/activity';
import { tableName } from '../../shared/db/client';
import { conversationItem, newConversation } from '../../shared/db/conversations';
import { eventDataOf, eventItem } from '../../shared/db/events';
import { keys } from '../../shared/db/keys';
import { newMessage, putMessage } from '../../shared/db/messages';
import { ValidationError } from '../../shared/errors';
import type { Visitor } from '../../shared/schemas/visitor';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const HORIZON = 33 * DAY_MS;
const NOW = at('2026-11-26T09:14:07.123Z');
const orgId = '01a200d1-22e7-7191-94d8-9a34a53961fd';

function refusal(run: () => unknown): { field?: string; message: string } {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationError)
      return { field: (error.details as { field?: string } | undefined)?.field, message: error.message };
    throw error;
  }
  throw new Error('not refused');
}

describe('the export window', () => {
  it('defaults to request time − 30 days .. request time, to the millisecond', () => {
    expect(exportWindow({}, NOW, HORIZON)).toEqual({ from: NOW - 30 * DAY_MS, to: NOW });
    expect(exportWindow({ date_to: '2026-11-25T08:00:00.5+02:00' }, NOW, HORIZON)).toEqual({
      from: at('2026-10-26T06:00:00.500Z'),
      to: at('2026-11-25T06:00:00.500Z'),
    });
  });

  it('keeps a time of day as given, and reads a date as its UTC midnight', () => {
    expect(exportWindow({ date_from: '2026-11-20T10:00:00Z' }, NOW, HORIZON)).toEqual({
      from: at('2026-11-20T10:00:00.000Z'),
      to: NOW,
    });
    expect(exportWindow({ date_from: '2025-11-01', date_to: '2025-12-01' }, NOW, HORIZON)).toEqual({
      from: at('2025-11-01T00:00:00.000Z'),
      to: at('2025-12-01T00:00:00.000Z'),
    });
  });

  it('refuses an empty or reversed window and one over 366 days, naming date_from', () => {
    expect(
      refusal(() => exportWindow({ date_from: '2026-11-20', date_to: '2026-11-20' }, NOW, HORIZON)),
    ).toMatchObject({ field: 'date_from' });
    expect(refusal(() => exportWindow({ date_from: '2026-11-27' }, NOW, HORIZON)).message).toMatch(
      /request time/,
    );
    expect(exportWindow({ date_from: '2024-01-01', date_to: '2025-01-01' }, NOW, HORIZON).to).toBe(
      at('2025-01-01T00:00:00.000Z'),
    );
    expect(
      refusal(() => exportWindow({ date_from: '2024-01-01', date_to: '2025-01-02' }, NOW, HORIZON)),
    ).toMatchObject({ field: 'date_from', message: 'An export covers at most 366 days' });
  });

  it('refuses a bound with a time of day beyond the horizon, naming it; midnights go back a year', () => {
    const old = iso(NOW - HORIZON - 1);
    expect(refusal(() => exportWindow({ date_from: old }, NOW, HORIZON)).field).toBe('date_from');
    expect(refusal(() => exportWindow({ date_from: '2026-01-01', date_to: old }, NOW, HORIZON)).field).toBe(
      'date_to',
    );
    // date_from defaults from date_to: date_to is the bound the caller gave.
    const defaulted = refusal(() => exportWindow({ date_to: iso(NOW - 10 * DAY_MS) }, NOW, HORIZON));
    expect(defaulted.field).toBe('date_to');
    expect(defaulted.message).toMatch(/date_from defaults/);
    expect(exportWindow({ date_from: iso(NOW - HORIZON) }, NOW, HORIZON).from).toBe(NOW - HORIZON);
    expect(exportWindow({ date_from: '2025-11-26' }, NOW, HORIZON).from).toBe(at('2025-11-26T00:00:00.000Z'));
    expect(
      exportWindow({ date_from: '2025-12-01T01:00:00+01:00', date_to: '2026-01-01' }, NOW, HORIZON),
    ).toEqual({
      from: at('2025-12-01T00:00:00.000Z'),
      to: at('2026-01-01T00:00:00.000Z'),
    });
  });
});

describe('planDays', () => {
  it('counts whole days from the counters, a past edge from its shorter side, today from its items', () => {
    const plans = planDays({ from: at('2026-11-20T10:00:00.000Z'), to: NOW }, NOW);

    expect(plans.map((plan) => [plan.day, plan.count])).toEqual([
      ['2026-11-20', 'counters-less-items'],
      ['2026-11-21', 'counters'],
      ['2026-11-22', 'counters'],
      ['2026-11-23', 'counters'],
      ['2026-11-24', 'counters'],
      ['2026-11-25', 'counters'],
      ['2026-11-26', 'items'],
    ]);
    expect(plans[0]).toMatchObject({
      span: { from: at('2026-11-20T10:00:00.000Z'), to: at('2026-11-21T00:00:00.000Z') },
      read: [{ from: at('2026-11-20T00:00:00.000Z'), to: at('2026-11-20T10:00:00.000Z') }],
    });
    expect(plans.at(-1)).toMatchObject({ read: [{ from: at('2026-11-26T00:00:00.000Z'), to: NOW }] });
    expect(spansToCount(plans)).toHaveLength(2);
  });

  it('finds the UTC days of windows before 1970 too', () => {
    const plans = planDays({ from: at('1969-12-31T12:00:00.000Z'), to: at('1970-01-02T00:00:00.000Z') }, NOW);

    expect(plans.map((plan) => [plan.day, plan.count, iso(plan.span.from)])).toEqual([
      ['1969-12-31', 'items', '1969-12-31T12:00:00.000Z'],
      ['1970-01-01', 'counters', '1970-01-01T00:00:00.000Z'],
    ]);
  });

  it('reads a past edge directly when the part covered is the shorter one', () => {
    const [plan] = planDays(
      { from: at('2026-11-20T18:00:00.000Z'), to: at('2026-11-21T00:00:00.000Z') },
      NOW,
    );

    expect(plan).toMatchObject({
      count: 'items',
      read: [{ from: at('2026-11-20T18:00:00.000Z'), to: at('2026-11-21T00:00:00.000Z') }],
    });
  });

  it('counts a day that has not settled from its items, whatever their length', () => {
    const yesterdayEnd = at('2026-11-26T00:00:00.000Z');
    const window = { from: at('2026-11-25T01:00:00.000Z'), to: at('2026-11-25T23:00:00.000Z') };

    expect(planDays(window, yesterdayEnd + COMMIT_WINDOW_MS - 1)[0]?.count).toBe('items');
    expect(planDays(window, yesterdayEnd + COMMIT_WINDOW_MS)[0]).toMatchObject({
      count: 'counters-less-items',
      read: [
        { from: at('2026-11-25T00:00:00.000Z'), to: window.from },
        { from: window.to, to: yesterdayEnd },
      ],
    });
  });

  it('cuts the window into days that cover it exactly, each read within its day', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: NOW - 366 * DAY_MS, max: NOW + DAY_MS }),
        fc.integer({ min: 1, max: 366 * DAY_MS }),
        (from, length) => {
          const window = { from, to: from + length };
          const plans = planDays(window, NOW);
          let next = window.from;
          for (const plan of plans) {
            const dayStart = at(`${plan.day}T00:00:00.000Z`);
            if (plan.span.from !== next || plan.span.to <= plan.span.from) return false;
            if (plan.span.from < dayStart || plan.span.to > dayStart + DAY_MS) return false;
            next = plan.span.to;
            if (plan.count === 'counters' && plan.span.to - plan.span.from !== DAY_MS) return false;
            if (plan.count === 'items' && JSON.stringify(plan.read) !== JSON.stringify([plan.span]))
              return false;
            if (plan.count === 'counters-less-items') {
              const read = plan.read.reduce((sum, part) => sum + part.to - part.from, 0);
              const covered = plan.span.to - plan.span.from;
              if (read + covered !== DAY_MS || read >= covered) return false;
              if (dayStart + DAY_MS + COMMIT_WINDOW_MS > NOW) return false;
            }
          }
          return next === window.to;
        },
      ),
    );
  });
});

const totals = (changes: Partial<DayTotals>): DayTotals => ({ ...emptyTotals(), ...changes });

describe('dayFigures', () => {
  it('takes whole days from the counters, part-days from their counts, and subtracts what is left out', () => {
    const plans = planDays({ from: at('2026-11-20T10:00:00.000Z'), to: at('2026-11-22T06:00:00.000Z') }, NOW);
    const counters = new Map([
      ['2026-11-20', totals({ conversationsCreated: 10, csatScores: [1, 0, 0, 0, 2] })],
      ['2026-11-21', totals({ conversationsCreated: 7 })],
      ['2026-11-22', totals({ conversationsCreated: 99 })],
    ]);
    // 2026-11-20: counters less 00:00–10:00; 2026-11-22: 00:00–06:00 directly.
    const counted = [
      totals({ conversationsCreated: 4, csatScores: [1, 0, 0, 0, 0] }),
      totals({ conversationsCreated: 3 }),
    ];

    const figures = dayFigures(plans, counters, counted);

    expect(figures.map((day) => [day.day, day.totals.conversationsCreated])).toEqual([
      ['2026-11-20', 6],
      ['2026-11-21', 7],
      ['2026-11-22', 3],
    ]);
    expect(figures[0]?.totals.csatScores).toEqual([0, 0, 0, 0, 2]);
    expect(() => dayFigures(plans, counters, counted.slice(1))).toThrow();
  });
});

const conversationId = '01a200d1-3333-7191-94d8-9a34a53961fd';
const otherId = '01a200d1-4444-7191-94d8-9a34a53961fd';

describe('tally', () => {
  const span: Span = { from: at('2026-11-20T10:00:00.000Z'), to: at('2026-11-20T18:00:00.000Z') };
  const message = (when: string, senderType: string, id = conversationId): ActivityFact => ({
    kind: 'message',
    at: at(when),
    senderType,
    conversationId: id,
  });
  const answered = (firstVisitorMessageAt: string, firstResponseTimeMs: number): ConversationFacts => ({
    deleted: false,
    firstVisitorMessageAt,
    firstResponseTimeMs,
    activeSurvey: null,
  });

  it('counts what lies in the span: from its first millisecond, up to but not including its end', () => {
    const facts: ActivityFact[] = [
      { kind: 'created', at: at('2026-11-20T09:59:59.999Z') },
      { kind: 'created', at: at('2026-11-20T10:00:00.000Z') },
      { kind: 'closed', at: at('2026-11-20T17:59:59.999Z') },
      { kind: 'closed', at: at('2026-11-20T18:00:00.000Z') },
      message('2026-11-20T12:00:00.000Z', 'visitor'),
      message('2026-11-20T12:00:00.000Z', 'bot'),
    ];

    expect(tally(span, facts, [], new Map())).toMatchObject({
      conversationsCreated: 1,
      conversationsClosed: 1,
      visitorMessages: 1,
      operatorMessages: 0,
      firstResponses: 0,
    });
  });

  it('counts a first response in the span once, and none whose first answer came before it', () => {
    const facts = [
      message('2026-11-20T11:00:00.000Z', 'operator'),
      message('2026-11-20T11:05:00.000Z', 'operator'),
      message('2026-11-20T11:10:00.000Z', 'operator', otherId),
    ];
    const conversations = new Map([
      [conversationId, answered('2026-11-20T10:58:00.000Z', 120_000)],
      // Answered the day before; today's operator messages are not its first response.
      [otherId, answered('2026-11-19T10:00:00.000Z', 60_000)],
    ]);

    const counted = tally(span, facts, [], conversations);

    expect(counted).toMatchObject({ operatorMessages: 3, firstResponses: 1, firstResponseMsSum: 120_000 });
    expect(counted.firstResponseBuckets[frtBucketOf(120_000)]).toBe(1);
  });

  it('counts a response only while its conversation lives and holds it as the active one', () => {
    const response = (surveyId: string, id: string, when = '2026-11-20T12:00:00.000Z') => ({
      at: at(when),
      conversationId: id,
      surveyId,
    });
    const live: ConversationFacts = {
      ...answered('2026-11-20T10:00:00.000Z', 1),
      activeSurvey: { surveyId: 's1', score: 4 },
    };
    const conversations = new Map([
      [conversationId, live],
      [otherId, { ...live, deleted: true }],
    ]);

    const counted = tally(
      span,
      [],
      [
        response('s1', conversationId),
        response('s0', conversationId),
        response('s1', otherId),
        response('s1', conversationId, '2026-11-20T18:00:00.000Z'),
      ],
      conversations,
    );

    expect(counted).toMatchObject({ csatResponses: 1, csatScoreSum: 4, csatScores: [0, 0, 0, 1, 0] });
  });
});

describe('what the count reads off stored items', () => {
  const visitor: Visitor = {
    id: '01a200d1-5555-7191-94d8-9a34a53961fd',
    identifier: 'ada@example.com',
    fingerprint: null,
    geoCountry: null,
    geoCity: null,
    totalSessions: 1,
    firstSeenAt: '2026-11-20T09:00:00.000Z',
    lastSeenAt: '2026-11-20T09:00:00.000Z',
    metadata: {},
  };
  const opened = () =>
    newConversation({
      id: conversationId,
      organizationId: orgId,
      visitor,
      operatorId: null,
      status: 'open',
      priority: 'normal',
      source: 'widget',
      snoozedUntil: null,
      createdAt: '2026-11-20T09:00:00.000Z',
      title: 'Parcel',
      tags: [],
      customFields: {},
      language: null,
      metadata: {},
    });
  const messageAt = (now: string, senderType: 'visitor' | 'operator') =>
    newMessage({ orgId, conversationId, senderType, senderId: visitor.id, content: 'Hello', now });

  it('finds a conversation’s first response at the operator message that set it', () => {
    const question = messageAt('2026-11-20T09:01:00.000Z', 'visitor');
    const answer = messageAt('2026-11-20T09:04:30.250Z', 'operator');
    const later = messageAt('2026-11-20T09:10:00.000Z', 'operator');
    const state = withMessage(withMessage(withMessage(opened(), question), answer), later);

    const facts = conversationFactsOf(conversationItem(state));

    expect(firstResponseAt(facts)).toBe(at(answer.createdAt));
    expect(facts.firstResponseTimeMs).toBe(210_250);
    expect(conversationFactsOf(conversationItem(opened()))).toEqual({
      deleted: false,
      firstVisitorMessageAt: null,
      firstResponseTimeMs: null,
      activeSurvey: null,
    });
  });

  it('reads a message event as the message’s own instant and sender, its id minted just after', () => {
    const message = messageAt('2026-11-20T09:01:00.000Z', 'visitor');
    const item = putMessage(message)[1]?.action.Put?.Item as Record<string, unknown>;
    const conversation = eventItem(orgId, 'conversation.closed', {
      ...opened(),
      updatedAt: '2026-11-20T11:00:00.000Z',
    });

    expect(factOf(item.type, eventDataOf(item))).toEqual({
      kind: 'message',
      at: at(message.createdAt),
      senderType: 'visitor',
      conversationId,
    });
    expect(factOf(conversation.type, eventDataOf(conversation))).toEqual({
      kind: 'closed',
      at: at('2026-11-20T11:00:00.000Z'),
    });
    expect(factOf('conversation.updated', eventDataOf(conversation))).toBeUndefined();
    const idMs = Number.parseInt(String(conversation.id).replaceAll('-', '').slice(0, 12), 16);
    expect(Math.abs(idMs - Date.parse(conversation.timestamp))).toBe(0);
  });
});

describe('countSpans reads', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  afterAll(() => ddb.restore());
  beforeEach(() => ddb.reset());

  it('reads each span’s events an hour a Query, widened by the commit window, and its responses by time', async () => {
    const span = { from: at('2026-11-20T10:00:00.000Z'), to: at('2026-11-20T12:30:00.000Z') };
    const answer = eventItem(orgId, 'message.created', {
      conversationId,
      senderType: 'operator',
      createdAt: '2026-11-20T10:15:00.000Z',
    });
    ddb
      .on(QueryCommand)
      .callsFake((input: { IndexName?: string; ExpressionAttributeValues: Record<string, string> }) => {
        if (input.IndexName)
          return {
            Items: [
              { gsi1sk: `2026-11-20T11:00:00.000Z#${conversationId}#s1` },
              { gsi1sk: `2026-11-20T11:30:00.000Z#${otherId}#s2` },
            ],
          };
        return {
          Items:
            input.ExpressionAttributeValues[':from'] === keys.eventKeyAt(span.from - COMMIT_WINDOW_MS) &&
            input.ExpressionAttributeValues[':pk'] === answer.pk
              ? [answer]
              : [],
        };
      });
    ddb.on(BatchGetCommand).resolves({
      Responses: {
        [tableName]: [
          {
            id: conversationId,
            deletedAt: null,
            firstVisitorMessageAt: '2026-11-20T10:00:00.000Z',
            firstResponseTimeMs: 900_000,
            activeSurvey: { surveyId: 's1', score: 5, day: '2026-11-20', operatorId: null },
          },
          { id: otherId, deletedAt: '2026-11-21T00:00:00.000Z', activeSurvey: { surveyId: 's2', score: 1 } },
        ],
      },
    });

    const [counted] = await countSpans(orgId, [span]);

    const queries = ddb.commandCalls(QueryCommand).map((call) => call.args[0].input);
    const eventRanges = queries
      .filter((input) => !input.IndexName)
      .map((input) =>
        [':pk', ':from', ':to'].map((name) => String(input.ExpressionAttributeValues?.[name])).join(' '),
      );
    const widened = { from: span.from - COMMIT_WINDOW_MS, to: span.to + COMMIT_WINDOW_MS };
    // Every hour of the span, in each shard partition of the events.
    const hours = [
      [keys.eventKeyAt(widened.from), keys.eventKeyAt(widened.from + 3_600_000)],
      [keys.eventKeyAt(widened.from + 3_600_000), keys.eventKeyAt(widened.from + 7_200_000)],
      [keys.eventKeyAt(widened.from + 7_200_000), keys.eventKeyAt(widened.to)],
    ];
    expect(eventRanges.sort()).toEqual(
      hours.flatMap((hour) => keys.eventsPartitions(orgId).map((pk) => [pk, ...hour].join(' '))).sort(),
    );
    expect(queries.find((input) => input.IndexName)).toMatchObject({
      IndexName: 'gsi1',
      ExpressionAttributeValues: {
        ':pk': keys.surveysByTimePartition(orgId).pk,
        ':from': '2026-11-20T10:00:00.000Z',
        ':to': '2026-11-20T12:30:00.000Z',
      },
    });
    const batch = ddb.commandCalls(BatchGetCommand)[0]?.args[0].input.RequestItems ?? {};
    const request = Object.values(batch)[0];
    expect(request?.Keys).toEqual([
      keys.conversation(orgId, conversationId),
      keys.conversation(orgId, otherId),
    ]);
    expect(request?.ConsistentRead).toBe(false);
    expect(counted).toMatchObject({
      operatorMessages: 1,
      firstResponses: 1,
      firstResponseMsSum: 900_000,
      csatResponses: 1,
      csatScoreSum: 5,
    });
    expect(PART_DAY_HORIZON_MS).toBe(33 * DAY_MS);
  });

  it('reads nothing when no day is cut', async () => {
    expect(await countSpans(orgId, [])).toEqual([]);
    expect(ddb.calls()).toHaveLength(0);
  });
});
