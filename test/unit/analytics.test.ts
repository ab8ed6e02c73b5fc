import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import fc from 'fast-check';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type DayTotals,
  emptyTotals,
  FRT_BUCKET_BOUNDS_MS,
  FRT_BUCKETS,
  frtBucketOf,
  medianFromBuckets,
  responseRateOf,
  sumTotals,
} from '../../shared/analytics/counters';
import { csatReport, periodDays } from '../../shared/analytics/csat';
import { addDays, daysBetween } from '../../shared/analytics/days';
import { analyticsRows, type MetricRow, metricsOf } from '../../shared/analytics/export';
import { incrementWrites } from '../../shared/db/increments';
import { keys } from '../../shared/db/keys';
import { STATS_SHARDS, shardOf, stats } from '../../shared/db/stats';
import { csvCell, csvRow } from '../../shared/exports/csv';
import { uuidv7 } from '../../shared/ids';

const orgId = '01a200d1-22e7-7191-94d8-9a34a53961fd';

function histogramOf(times: readonly number[]): number[] {
  const buckets = new Array<number>(FRT_BUCKETS).fill(0);
  for (const ms of times) buckets[frtBucketOf(ms)] = (buckets[frtBucketOf(ms)] ?? 0) + 1;
  return buckets;
}

describe('first response time histogram', () => {
  it('puts a time in the first bucket whose bound it does not exceed, and above 48 h in the open last one', () => {
    expect(frtBucketOf(0)).toBe(0);
    expect(frtBucketOf(30_000)).toBe(0);
    expect(frtBucketOf(30_001)).toBe(1);
    expect(frtBucketOf(172_800_000)).toBe(FRT_BUCKET_BOUNDS_MS.length - 1);
    expect(frtBucketOf(172_800_001)).toBe(FRT_BUCKET_BOUNDS_MS.length);
  });

  it('reads the median as the bound of the bucket holding the middle time (lower middle for an even count)', () => {
    expect(medianFromBuckets(histogramOf([]))).toBeNull();
    expect(medianFromBuckets(histogramOf([45_000]))).toBe(60_000);
    // Four times: the lower middle (the 2nd) is 50 s.
    expect(medianFromBuckets(histogramOf([10_000, 50_000, 400_000, 500_000]))).toBe(60_000);
    expect(medianFromBuckets(histogramOf([10_000, 50_000, 400_000]))).toBe(60_000);
    expect(medianFromBuckets(histogramOf([200_000_000, 300_000_000]))).toBe(172_800_000);
  });

  it('bounds the true median from above by the bucket, for any set of times', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 300_000_000 }), { minLength: 1, maxLength: 200 }),
        (times) => {
          const sorted = [...times].sort((a, b) => a - b);
          const median = sorted[Math.ceil(sorted.length / 2) - 1] ?? 0;
          const reported = medianFromBuckets(histogramOf(times));
          const bucket = frtBucketOf(median);
          if (bucket === FRT_BUCKET_BOUNDS_MS.length) return reported === 172_800_000 && median > 172_800_000;
          const below = FRT_BUCKET_BOUNDS_MS[bucket - 1] ?? -1;
          return reported !== null && median <= reported && median > below;
        },
      ),
    );
  });
});

describe('day shards', () => {
  it('keeps a conversation on one shard, and spreads conversations evenly over all of them', () => {
    const counts = new Array<number>(STATS_SHARDS).fill(0);
    for (let i = 0; i < 8_000; i++) {
      const id = uuidv7();
      expect(shardOf(id)).toBe(shardOf(id));
      counts[shardOf(id)] = (counts[shardOf(id)] ?? 0) + 1;
    }
    for (const count of counts) {
      expect(count).toBeGreaterThan(800);
      expect(count).toBeLessThan(1_200);
    }
  });

  describe('read back', () => {
    const ddb = mockClient(DynamoDBDocumentClient);
    afterAll(() => ddb.restore());
    beforeEach(() => ddb.reset());

    it('sums the shards of each day, following pages', async () => {
      ddb
        .on(QueryCommand)
        .resolvesOnce({
          Items: [
            { day: '2026-11-20', created: 2, msgVisitor: 5, frt01: 1, frtCount: 1, frtSumMs: 40_000 },
            { day: '2026-11-20', created: 1, csatCount: 1, csatSum: 4, csat4: 1 },
          ],
          LastEvaluatedKey: { pk: 'x', sk: 'y' },
        })
        .resolvesOnce({
          Items: [
            { day: '2026-11-21', closed: 3, msgOperator: 2, csatCount: 2, csatSum: 3, csat1: 1, csat2: 1 },
          ],
        });

      const byDay = await stats.days(orgId, '2026-11-20', '2026-11-21');

      const first = byDay.get('2026-11-20');
      expect(first).toMatchObject({
        conversationsCreated: 3,
        visitorMessages: 5,
        firstResponses: 1,
        firstResponseMsSum: 40_000,
        csatResponses: 1,
        csatScoreSum: 4,
        csatScores: [0, 0, 0, 1, 0],
      });
      expect(first?.firstResponseBuckets[1]).toBe(1);
      expect(byDay.get('2026-11-21')).toMatchObject({
        conversationsClosed: 3,
        operatorMessages: 2,
        csatScores: [1, 1, 0, 0, 0],
      });
      const calls = ddb.commandCalls(QueryCommand);
      expect(calls).toHaveLength(2);
      expect(calls[0]?.args[0].input.ExpressionAttributeValues).toEqual({
        ':pk': keys.statsPartition(orgId),
        ':from': 'DAY#2026-11-20',
        ':to': 'DAY#2026-11-21~',
      });
      expect(calls[1]?.args[0].input.ExclusiveStartKey).toEqual({ pk: 'x', sk: 'y' });
    });

    it('reads a year in Queries of at most 92 days, sent together, covering every day once', async () => {
      ddb.on(QueryCommand).resolves({ Items: [] });

      await stats.days(orgId, '2024-01-01', '2024-12-31');

      const ranges = ddb
        .commandCalls(QueryCommand)
        .map((call) => call.args[0].input.ExpressionAttributeValues as Record<string, string>)
        .map((values) => [values[':from']?.slice(4), values[':to']?.slice(4, 14)] as [string, string]);
      expect(ranges).toEqual([
        ['2024-01-01', '2024-04-01'],
        ['2024-04-02', '2024-07-02'],
        ['2024-07-03', '2024-10-02'],
        ['2024-10-03', '2024-12-31'],
      ]);
      expect(ranges.flatMap(([from, to]) => daysBetween(from, to))).toEqual(
        daysBetween('2024-01-01', '2024-12-31'),
      );
    });
  });
});

describe('incrementWrites', () => {
  const shard = (day: string, n: number) => keys.statsShard(orgId, day, n);

  it('sums increments of one item, puts a group’s on its first item, and drops what adds up to zero', () => {
    const writes = incrementWrites([
      {
        key: shard('2026-11-21', 3),
        add: { closed: 1 },
        fields: { entity: 'stats', day: '2026-11-21' },
        group: 'DAY#2026-11-21',
      },
      { key: shard('2026-11-21', 5), add: { closed: 1, created: 1 }, group: 'DAY#2026-11-21' },
      { key: shard('2026-11-20', 5), add: { csatCount: -1 }, group: 'DAY#2026-11-20' },
      { key: shard('2026-11-20', 1), add: { csatCount: 1 }, group: 'DAY#2026-11-20' },
      { key: keys.statsOperatorDay(orgId, '2026-11-20', 'op'), add: { csatCount: 1, csatSum: 0 } },
    ]);

    expect(writes.map((write) => write.action.Update)).toEqual([
      {
        TableName: expect.any(String),
        Key: shard('2026-11-21', 3),
        UpdateExpression: 'SET #s0 = :s0, #s1 = :s1 ADD #a0 :a0, #a1 :a1',
        ExpressionAttributeNames: { '#s0': 'entity', '#s1': 'day', '#a0': 'closed', '#a1': 'created' },
        ExpressionAttributeValues: { ':s0': 'stats', ':s1': '2026-11-21', ':a0': 2, ':a1': 1 },
      },
      {
        TableName: expect.any(String),
        Key: keys.statsOperatorDay(orgId, '2026-11-20', 'op'),
        UpdateExpression: 'ADD #a0 :a0',
        ExpressionAttributeNames: { '#a0': 'csatCount' },
        ExpressionAttributeValues: { ':a0': 1 },
      },
    ]);
  });

  it('never writes two actions on one item', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            day: fc.integer({ min: 0, max: 3 }),
            shard: fc.integer({ min: 0, max: 7 }),
            grouped: fc.boolean(),
          }),
          {
            maxLength: 60,
          },
        ),
        (entries) => {
          const writes = incrementWrites(
            entries.map(({ day, shard: n, grouped }) => ({
              key: shard(`2026-11-0${day + 1}`, n),
              add: { created: 1 },
              ...(grouped ? { group: `DAY#${day}#${n % 2}` } : {}),
            })),
          );
          const ids = writes.map((write) => JSON.stringify(write.action.Update?.Key));
          return new Set(ids).size === ids.length;
        },
      ),
    );
  });
});

const totals = (changes: Partial<DayTotals>): DayTotals => ({ ...emptyTotals(), ...changes });

describe('CSAT figures', () => {
  it('lists every day of the period, operators by responses, and caps the response rate', () => {
    const days = periodDays('7d', '2026-11-21');
    const report = csatReport(
      '7d',
      days,
      new Map([
        [
          '2026-11-16',
          totals({ csatResponses: 2, csatScoreSum: 7, csatScores: [0, 0, 1, 1, 0], conversationsClosed: 1 }),
        ],
        ['2026-11-21', totals({ csatResponses: 1, csatScoreSum: 5, csatScores: [0, 0, 0, 0, 1] })],
        // Outside the period: ignored.
        ['2026-11-14', totals({ csatResponses: 9, csatScoreSum: 9 })],
      ]),
      new Map([
        ['b', { responses: 1, scoreSum: 5 }],
        ['a', { responses: 2, scoreSum: 7 }],
        ['c', { responses: 0, scoreSum: 0 }],
      ]),
    );

    expect(days).toEqual(daysBetween('2026-11-15', '2026-11-21'));
    expect(report).toMatchObject({
      averageScore: 4,
      totalResponses: 3,
      responseRate: 1,
      distribution: { '1': 0, '2': 0, '3': 1, '4': 1, '5': 1 },
      byOperator: [
        { operatorId: 'a', averageScore: 3.5, responses: 2 },
        { operatorId: 'b', averageScore: 5, responses: 1 },
      ],
    });
    expect(report.daily).toHaveLength(7);
    expect(report.daily[0]).toEqual({ date: '2026-11-15', averageScore: null, responses: 0 });
    expect(report.daily[1]).toEqual({ date: '2026-11-16', averageScore: 3.5, responses: 2 });
    expect(responseRateOf(3, 0)).toBe(0);
    expect(responseRateOf(1, 4)).toBe(0.25);
  });
});

describe('analytics export rows', () => {
  const at = (iso: string) => Date.parse(iso);
  const window = { from: at('2026-11-20T10:00:00.000Z'), to: at('2026-11-22T09:14:00.000Z') };
  const days = [
    { span: { from: window.from, to: at('2026-11-21T00:00:00.000Z') }, totals: totals({}) },
    {
      span: { from: at('2026-11-21T00:00:00.000Z'), to: at('2026-11-22T00:00:00.000Z') },
      totals: totals({
        conversationsCreated: 2,
        firstResponses: 2,
        firstResponseMsSum: 100_000,
        firstResponseBuckets: histogramOf([40_000, 60_000]),
      }),
    },
    {
      span: { from: at('2026-11-22T00:00:00.000Z'), to: window.to },
      totals: totals({ conversationsCreated: 1, conversationsClosed: 2, csatResponses: 1, csatScoreSum: 4 }),
    },
  ];
  const value = (rows: MetricRow[], metric: string) => rows.find((row) => row.metric === metric)?.value;

  it('gives one row per metric whose period is exactly the window, summing its days', () => {
    const rows = analyticsRows(window, days);

    expect(rows.map((row) => row.metric)).toEqual(metricsOf(totals({})).map(([metric]) => metric));
    expect(new Set(rows.map((row) => `${row.start} ${row.end}`))).toEqual(
      new Set(['2026-11-20T10:00:00.000Z 2026-11-22T09:14:00.000Z']),
    );
    expect(value(rows, 'conversations_created')).toBe(3);
    expect(value(rows, 'first_response_time_mean_ms')).toBe(50_000);
    expect(value(rows, 'first_response_time_median_ms')).toBe(60_000);
    expect(value(rows, 'csat_response_rate')).toBe(0.5);
  });

  it('adds, with granularity day, the metrics of each day after the window’s, edges cut, empty means empty', () => {
    const rows = analyticsRows(window, days, 'day');
    const metrics = metricsOf(totals({})).length;
    const periods = [...new Set(rows.map((row) => `${row.start} ${row.end}`))];

    expect(rows).toHaveLength(metrics * 4);
    expect(periods).toEqual([
      '2026-11-20T10:00:00.000Z 2026-11-22T09:14:00.000Z',
      '2026-11-20T10:00:00.000Z 2026-11-21T00:00:00.000Z',
      '2026-11-21T00:00:00.000Z 2026-11-22T00:00:00.000Z',
      '2026-11-22T00:00:00.000Z 2026-11-22T09:14:00.000Z',
    ]);
    const first = rows.slice(metrics, 2 * metrics);
    expect(value(first, 'first_response_time_mean_ms')).toBeNull();
    expect(value(first, 'first_response_time_median_ms')).toBeNull();
    expect(value(first, 'csat_average_score')).toBeNull();
    expect(value(first, 'csat_response_rate')).toBe(0);
    expect(value(rows.slice(3 * metrics), 'csat_average_score')).toBe(4);
    expect(sumTotals([]).firstResponseBuckets).toHaveLength(FRT_BUCKETS);
    expect(addDays('2024-02-28', 2)).toBe('2024-03-01');
  });
});

describe('CSV cells', () => {
  it('neutralizes what a spreadsheet reads as a formula and quotes separators', () => {
    for (const start of ['=', '+', '-', '@', '\t', '\r', '\n'])
      expect(csvCell(`${start}SUM(A1)`).replace(/^"/, '').startsWith("'")).toBe(true);
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('\nline')).toBe(`"'\nline"`);
    expect(csvCell(-3)).toBe('-3');
    expect(csvCell(null)).toBe('');
    expect(csvCell(Number.NaN)).toBe('');
    expect(csvRow(['metric', 1.5, null])).toBe('metric,1.5,\r\n');
  });
});
