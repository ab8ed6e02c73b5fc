import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { usageIncrementsOf } from '../../shared/db/usage-stream';
import { periodsOf, usageReport, usageWindow } from '../../shared/usage/report';
import { emptyUsage } from '../../shared/usage/usage';

/** What the table's stream adds to an organization's usage, and how a window is cut and summed. */

type Item = Record<string, unknown>;
const org = '0196a1b2-0000-7000-8000-000000000001';

function record(eventName: 'INSERT' | 'MODIFY' | 'REMOVE', before?: Item, after?: Item): DynamoDBRecord {
  return {
    eventID: 'e1',
    eventName,
    dynamodb: {
      ApproximateCreationDateTime: Date.parse('2026-11-20T12:00:00Z') / 1000,
      ...(before ? { OldImage: marshall(before) as never } : {}),
      ...(after ? { NewImage: marshall(after) as never } : {}),
    },
  };
}

/** The counters a record adds, summed over its increments (the item each lands on aside). */
function added(rec: DynamoDBRecord): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const increment of usageIncrementsOf(rec))
    for (const [name, amount] of Object.entries(increment.add))
      if (amount) sums[name] = (sums[name] ?? 0) + amount;
  return sums;
}

const delivery = (fields: Item): Item => ({
  pk: `ORG#${org}#WEBHOOK#w1`,
  sk: 'DELIVERY#d1',
  entity: 'delivery',
  lastAttemptAt: '2026-11-20T10:00:00.000Z',
  ...fields,
});
const upload = (status: string): Item => ({
  pk: `ORG#${org}#UPLOAD#u1`,
  sk: 'UPLOAD',
  entity: 'upload',
  status,
  size: 2048,
});

describe('usage counted from the stream', () => {
  it('counts inserted conversations, messages by sender, notes and events, on their own day', () => {
    const conversation = {
      pk: `ORG#${org}#CONV#c1`,
      sk: 'CONVERSATION',
      entity: 'conversation',
      createdAt: '2026-11-19T23:59:59.999Z',
    };
    expect(usageIncrementsOf(record('INSERT', undefined, conversation))[0]?.key.sk).toMatch(
      /^DAY#2026-11-19#S#/,
    );
    expect(added(record('INSERT', undefined, conversation))).toEqual({ conv: 1 });
    expect(added(record('MODIFY', conversation, { ...conversation, status: 'closed' }))).toEqual({});
    const message = {
      pk: `ORG#${org}#CONV#c1`,
      sk: 'MSG#m1',
      entity: 'message',
      createdAt: '2026-11-20T01:00:00.000Z',
    };
    expect(added(record('INSERT', undefined, { ...message, senderType: 'visitor' }))).toEqual({
      msg: 1,
      msgV: 1,
    });
    expect(added(record('INSERT', undefined, { ...message, senderType: 'operator' }))).toEqual({ msg: 1 });
    expect(added(record('INSERT', undefined, { ...message, senderType: 'bot' }))).toEqual({ msg: 1 });
    expect(
      added(
        record('INSERT', undefined, {
          pk: `ORG#${org}#CONV#c1`,
          sk: 'NOTE#n1',
          entity: 'note',
          createdAt: '2026-11-20T01:00:00.000Z',
        }),
      ),
    ).toEqual({ notes: 1 });
    const event = {
      pk: `ORG#${org}#EVENTS#2`,
      sk: 'EVENT#e',
      entity: 'event',
      timestamp: '2026-11-20T01:00:00.000Z',
    };
    expect(added(record('INSERT', undefined, event))).toEqual({ events: 1 });
    // The shard backfill's copy: inserted without its entity, then given it: neither counts.
    const { entity: _entity, ...copy } = event;
    expect(added(record('INSERT', undefined, copy))).toEqual({});
    expect(added(record('MODIFY', copy, event))).toEqual({});
  });

  it('counts each webhook attempt once, a success and a delivery given up once per move', () => {
    expect(added(record('INSERT', undefined, delivery({ attempts: 1, status: 'succeeded' })))).toEqual({
      whA: 1,
      whS: 1,
    });
    expect(
      added(
        record(
          'MODIFY',
          delivery({ attempts: 0, status: 'pending' }),
          delivery({ attempts: 1, status: 'pending' }),
        ),
      ),
    ).toEqual({ whA: 1 });
    expect(
      added(
        record(
          'MODIFY',
          delivery({ attempts: 2, status: 'pending' }),
          delivery({ attempts: 3, status: 'failed' }),
        ),
      ),
    ).toEqual({ whA: 1, whF: 1 });
    // The same outcome written again (a duplicate queue message): nothing new.
    expect(
      added(
        record(
          'MODIFY',
          delivery({ attempts: 1, status: 'succeeded' }),
          delivery({ attempts: 1, status: 'succeeded' }),
        ),
      ),
    ).toEqual({});
    // Reopened, then given up again: one more failure.
    expect(
      added(
        record(
          'MODIFY',
          delivery({ attempts: 3, status: 'failed' }),
          delivery({ attempts: 3, status: 'pending' }),
        ),
      ),
    ).toEqual({});
  });

  it('counts an upload when it becomes ready, its bytes stored until it goes', () => {
    expect(added(record('MODIFY', upload('pending'), upload('ready')))).toEqual({
      upl: 1,
      uplB: 2048,
      storedDelta: 2048,
    });
    expect(added(record('MODIFY', upload('pending'), upload('rejected')))).toEqual({});
    expect(added(record('REMOVE', upload('ready')))).toEqual({ storedDelta: -2048 });
    expect(added(record('REMOVE', upload('pending')))).toEqual({});
    expect(added(record('MODIFY', upload('ready'), upload('rejected')))).toEqual({ storedDelta: -2048 });
  });

  it('counts PDF transcripts rendered, transcripts e-mailed and streamed exports with their rows', () => {
    const job = {
      pk: `ORG#${org}#EXPORT#j1`,
      sk: 'JOB',
      entity: 'exportJob',
      updatedAt: '2026-11-20T10:00:00.000Z',
    };
    expect(added(record('MODIFY', { ...job, status: 'running' }, { ...job, status: 'completed' }))).toEqual({
      tr: 1,
    });
    expect(added(record('MODIFY', { ...job, status: 'completed' }, { ...job, status: 'completed' }))).toEqual(
      {},
    );
    const audit = {
      pk: `ORG#${org}#AUDIT`,
      sk: 'AUDIT#a1',
      entity: 'orgAudit',
      at: '2026-11-20T10:00:00.000Z',
    };
    expect(added(record('INSERT', undefined, { ...audit, type: 'transcript.emailed' }))).toEqual({ tr: 1 });
    expect(
      added(record('INSERT', undefined, { ...audit, type: 'export.streamed', details: { rows: 42 } })),
    ).toEqual({ exp: 1, expRows: 42 });
    expect(added(record('INSERT', undefined, { ...audit, type: 'webhook.created' }))).toEqual({});
  });
});

describe('the usage window', () => {
  it('defaults to the 30 days that end today and refuses empty or too long windows', () => {
    expect(usageWindow({}, '2026-11-29')).toEqual({ from: '2026-10-31', to: '2026-11-30' });
    expect(() => usageWindow({ from: '2026-11-29', to: '2026-11-29' }, '2026-11-29')).toThrow(/before/);
    expect(() => usageWindow({ from: '2025-11-01', to: '2026-11-29' }, '2026-11-29')).toThrow(/366/);
  });

  it('cuts months to the window and gives each period the bytes stored at its end', () => {
    const window = { from: '2026-10-30', to: '2026-12-02' };
    expect(periodsOf(window, 'month').map((period) => [period.period, period.days.length])).toEqual([
      ['2026-10', 2],
      ['2026-11', 30],
      ['2026-12', 1],
    ]);
    const counters = new Map([
      ['2026-10-31', { ...emptyUsage(), messages: 3 }],
      ['2026-11-02', { ...emptyUsage(), messages: 4 }],
    ]);
    // 100 bytes stored before the window, 50 more on Nov 2, 30 gone on Dec 1.
    const stored = new Map([
      ['2026-09-01', 100],
      ['2026-11-02', 50],
      ['2026-12-01', -30],
    ]);
    const report = usageReport(window, 'month', counters, stored);
    expect(report.data.map((period) => [period.period, period.messages, period.storedBytes])).toEqual([
      ['2026-10', 3, 100],
      ['2026-11', 4, 150],
      ['2026-12', 0, 120],
    ]);
    expect(report.totals).toMatchObject({ messages: 7, storedBytes: 120 });
  });
});
