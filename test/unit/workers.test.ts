import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import pg from 'pg';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { purgeJobOf } from '../../functions/workers/conversation-changes';
import { lambdaContext } from '../../infra/local/lambda-event';
import { eventItem } from '../../shared/db/events';
import { keys } from '../../shared/db/keys';
import type { IndexRow } from '../../shared/search/projection';
import { streamRecord } from '../helpers/worker-faults';

/**
 * The stream workers' neighbours, faked: the table's items by key, each organization's webhooks,
 * what SQS accepts, what the search index takes. Each test names the one record that goes wrong.
 */
const fakes = vi.hoisted(() => {
  // The failures below are expected: their error lines would only clutter the output.
  const logLevel = process.env.POWERTOOLS_LOG_LEVEL;
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  return {
    logLevel,
    items: new Map<string, Record<string, unknown>>(),
    /** Events whose delivery jobs SQS refuses. */
    refusedEvents: new Set<string>(),
    /** Delivery jobs SQS accepted. */
    queued: [] as { first?: { eventId: string } }[],
    /** Search rows the database refuses, by document id. */
    refusedDocs: new Set<string>(),
    /** The search database does not answer at all. */
    unreachable: false,
  };
});

vi.mock('../../shared/db/batch', () => ({
  batchGet: vi.fn(async (wanted: { pk: string; sk: string }[]) =>
    wanted.flatMap((key) => fakes.items.get(`${key.pk}|${key.sk}`) ?? []),
  ),
}));
vi.mock('../../shared/db/webhooks', () => ({
  allWebhooks: vi.fn(async (orgId: string) => [
    { id: `0190a000-0000-7000-8000-${orgId.slice(-12)}`, active: true, events: ['message.created'] },
  ]),
}));
vi.mock('../../shared/queues', () => ({
  queues: {
    send: vi.fn(async () => undefined),
    sendBatch: vi.fn(async (_queue: string, bodies: { first?: { eventId: string } }[]) =>
      bodies.flatMap((body, index) => {
        if (body.first && fakes.refusedEvents.has(body.first.eventId)) return [index];
        fakes.queued.push(body);
        return [];
      }),
    ),
  },
}));
vi.mock('../../shared/search/connection', () => ({ searchPool: () => ({}) }));
vi.mock('../../shared/search/writer', () => ({
  writeRows: vi.fn(async (_db: unknown, rows: readonly IndexRow[]) => {
    if (fakes.unreachable) throw new Error('timeout exceeded when trying to connect');
    const refused = rows.find((row) => row.table === 'document' && fakes.refusedDocs.has(row.docId));
    // What PostgreSQL answers for a value it cannot take: the whole statement fails.
    if (refused)
      throw Object.assign(new pg.DatabaseError('invalid input syntax for type timestamp', 0, 'error'), {
        code: '22007',
      });
  }),
}));
vi.mock('../../shared/metrics', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../../shared/metrics')>()),
  publishSearchIndexLag: vi.fn(),
}));

afterAll(() => {
  if (fakes.logLevel === undefined) delete process.env.POWERTOOLS_LOG_LEVEL;
  else process.env.POWERTOOLS_LOG_LEVEL = fakes.logLevel;
});

const record = (
  eventName: DynamoDBRecord['eventName'],
  oldDeletedAt: string | undefined,
  newDeletedAt: string | undefined,
): DynamoDBRecord => ({
  eventName,
  dynamodb: {
    NewImage: {
      entity: { S: 'conversation' },
      organizationId: { S: 'org-1' },
      id: { S: 'conv-1' },
      ...(newDeletedAt ? { deletedAt: { S: newDeletedAt } } : { deletedAt: { NULL: true } }),
    },
    OldImage: oldDeletedAt ? { deletedAt: { S: oldDeletedAt } } : { deletedAt: { NULL: true } },
  },
});

describe('purgeJobOf', () => {
  it('asks for a purge only when a conversation has just been soft-deleted', () => {
    expect(purgeJobOf(record('MODIFY', undefined, '2026-11-22T00:00:00.000Z'))).toEqual({
      orgId: 'org-1',
      conversationId: 'conv-1',
    });
    expect(
      purgeJobOf(record('MODIFY', '2026-11-21T00:00:00.000Z', '2026-11-22T00:00:00.000Z')),
    ).toBeUndefined();
    expect(purgeJobOf(record('MODIFY', undefined, undefined))).toBeUndefined();
    expect(purgeJobOf(record('INSERT', undefined, '2026-11-22T00:00:00.000Z'))).toBeUndefined();
    const message = record('MODIFY', undefined, '2026-11-22T00:00:00.000Z');
    if (message.dynamodb?.NewImage) message.dynamodb.NewImage.entity = { S: 'message' };
    expect(purgeJobOf(message)).toBeUndefined();
  });
});

const ORG_A = '00000000-0000-4000-8000-00000000000a';
const ORG_B = '00000000-0000-4000-8000-00000000000b';
const CONVERSATION = '00000000-0000-4000-8000-0000000000c1';

/** A committed `message.created` event of `orgId`, stored in the fake table, and its stream record. */
function storedEvent(sequenceNumber: string, orgId: string, corrupt = false) {
  const item: Record<string, unknown> = eventItem(orgId, 'message.created', {
    id: crypto.randomUUID(),
    content: `message ${sequenceNumber}`,
  });
  // Data that no longer inflates: the event cannot be read, however often it is tried.
  if (corrupt) item.dataZ = new Uint8Array([0xff, 0xff, 0xff]);
  fakes.items.set(`${item.pk}|${item.sk}`, item);
  return { id: String(item.id), record: streamRecord(sequenceNumber, item) };
}

const batch = (...records: DynamoDBRecord[]): DynamoDBStreamEvent => ({ Records: records });
const queuedEvents = () => new Set(fakes.queued.map((job) => job.first?.eventId));

beforeEach(() => {
  vi.clearAllMocks();
  fakes.items.clear();
  fakes.refusedEvents.clear();
  fakes.queued.length = 0;
  fakes.refusedDocs.clear();
  fakes.unreachable = false;
});

describe('webhook fan-out, one record failing', () => {
  it('reports only the event that cannot be read; the batch’s other events are delivered', async () => {
    const { handler } = await import('../../functions/workers/webhook-fanout');
    const { batchGet } = await import('../../shared/db/batch');
    const { allWebhooks } = await import('../../shared/db/webhooks');
    const first = storedEvent('100', ORG_A);
    const unreadable = storedEvent('200', ORG_A, true);
    const third = storedEvent('300', ORG_B);
    const result = await handler(
      batch(first.record, unreadable.record, third.record),
      lambdaContext('webhook-fanout'),
    );
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: '200' }]);
    expect(queuedEvents()).toEqual(new Set([first.id, third.id]));
    // Still one read of the batch's events, and one of each organization's webhooks.
    expect(batchGet).toHaveBeenCalledTimes(1);
    expect(
      vi
        .mocked(allWebhooks)
        .mock.calls.map(([orgId]) => orgId)
        .sort(),
    ).toEqual([ORG_A, ORG_B]);
  });

  it('reports only the event whose delivery SQS refuses; every other event is queued', async () => {
    const { handler } = await import('../../functions/workers/webhook-fanout');
    const events = ['100', '200', '300', '400'].map((sequence, i) =>
      storedEvent(sequence, i % 2 ? ORG_B : ORG_A),
    );
    fakes.refusedEvents.add(events[2]?.id ?? '');
    const result = await handler(
      batch(...events.map((each) => each.record)),
      lambdaContext('webhook-fanout'),
    );
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: '300' }]);
    expect(queuedEvents()).toEqual(new Set([events[0]?.id, events[1]?.id, events[3]?.id]));
  });
});

/** A message of the conversation as the search index reads it from the stream. */
const messageRecord = (sequenceNumber: string, id: string) =>
  streamRecord(sequenceNumber, {
    ...keys.message(ORG_A, CONVERSATION, id),
    entity: 'message',
    id,
    senderType: 'visitor',
    content: `text ${sequenceNumber}`,
    createdAt: '2026-11-22T10:00:00.000Z',
    editCount: 0,
  });

describe('search index, one record failing', () => {
  const ids = [
    '0190a000-0000-7000-8000-000000000001',
    '0190a000-0000-7000-8000-000000000002',
    '0190a000-0000-7000-8000-000000000003',
  ];

  it('reports only the record whose row the database refuses, writes the others, and times only those', async () => {
    const { handler } = await import('../../functions/workers/search-index');
    const { writeRows } = await import('../../shared/search/writer');
    const { publishSearchIndexLag } = await import('../../shared/metrics');
    fakes.refusedDocs.add(ids[1] ?? '');
    const result = await handler(
      batch(...ids.map((id, i) => messageRecord(String(i + 1), id))),
      lambdaContext('search-index'),
    );
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: '2' }]);
    const attempts = vi
      .mocked(writeRows)
      .mock.calls.map(([, rows]) => rows.map((row) => (row.table === 'document' ? row.docId : row.table)));
    // One statement for the batch first; refused, then each record's own rows.
    expect(attempts).toEqual([ids, [ids[0]], [ids[1]], [ids[2]]]);
    const lags = vi.mocked(publishSearchIndexLag).mock.calls.flatMap(([each]) => each);
    expect(lags).toHaveLength(2);
  });

  it('retries the whole batch at once when the database does not answer, without a try per record', async () => {
    const { handler } = await import('../../functions/workers/search-index');
    const { writeRows } = await import('../../shared/search/writer');
    fakes.unreachable = true;
    const result = await handler(
      batch(...ids.map((id, i) => messageRecord(String(i + 1), id))),
      lambdaContext('search-index'),
    );
    expect(result.batchItemFailures).toEqual(['1', '2', '3'].map((itemIdentifier) => ({ itemIdentifier })));
    expect(writeRows).toHaveBeenCalledTimes(1);
  });
});
