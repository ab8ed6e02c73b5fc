import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { lambdaContext } from '../../infra/local/lambda-event';

/**
 * The delivery worker's batch, its neighbours faked: which messages go back to SQS when a job is
 * malformed, when one attempt cannot be recorded, and when the batch's one write of first successes
 * fails.
 */
const fakes = vi.hoisted(() => {
  // The failures below are expected: their error lines would only clutter the output.
  const logLevel = process.env.POWERTOOLS_LOG_LEVEL;
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  return {
    logLevel,
    /** Deliveries stored before this attempt (retries), by id. */
    stored: new Map<string, Record<string, unknown>>(),
    /** Deliveries whose attempt cannot be recorded, by id. */
    unrecordable: new Set<string>(),
    /** The batch's write of first successes fails. */
    batchWriteFails: false,
  };
});

vi.mock('../../shared/db/webhooks', () => ({
  webhooksByIds: vi.fn(async (_orgId: string, ids: readonly string[]) => {
    return new Map(ids.map((id) => [id, { id, url: 'https://receiver.example/hook', active: true }]));
  }),
  activeSecrets: vi.fn(async () => []),
}));
vi.mock('../../shared/webhooks/signing', () => ({ webhookHeaders: () => ({}) }));
vi.mock('../../shared/webhooks/client', () => ({
  postWebhook: vi.fn(async () => ({ ok: true, status: 200, durationMs: 1, error: null })),
}));
vi.mock('../../shared/webhooks/dispatch', () => ({ enqueueDelivery: vi.fn(async () => undefined) }));
vi.mock('../../shared/db/deliveries', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../shared/db/deliveries')>();
  return {
    ...actual,
    deliveries: {
      get: vi.fn(async (_orgId: string, _webhookId: string, id: string) => fakes.stored.get(id)),
      create: vi.fn(async () => true),
      recordAttempt: vi.fn(async (delivery: { id: string }) => {
        if (fakes.unrecordable.has(delivery.id)) throw new Error('ProvisionedThroughputExceededException');
        return true;
      }),
      recordFirstSuccesses: vi.fn(async () => {
        if (fakes.batchWriteFails) throw new Error('ProvisionedThroughputExceededException');
      }),
    },
  };
});
vi.mock('../../shared/metrics', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../../shared/metrics')>()),
  observeQueueBatch: vi.fn(),
  publishWebhookAttempts: vi.fn(),
}));

afterAll(() => {
  if (fakes.logLevel === undefined) delete process.env.POWERTOOLS_LOG_LEVEL;
  else process.env.POWERTOOLS_LOG_LEVEL = fakes.logLevel;
});

beforeEach(() => {
  vi.clearAllMocks();
  fakes.stored.clear();
  fakes.unrecordable.clear();
  fakes.batchWriteFails = false;
});

const ORG = '00000000-0000-4000-8000-00000000000a';
const WEBHOOK = '0190a000-0000-7000-8000-0000000000a1';
const CREATED_AT = '2026-11-22T10:00:00.000Z';
const id = (n: number) => `0190a000-0000-7000-8000-${String(n).padStart(12, '0')}`;

const message = (messageId: string, body: unknown): SQSRecord =>
  ({
    messageId,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    attributes: { SentTimestamp: String(Date.now()) },
  }) as unknown as SQSRecord;

/** A first attempt: the job carries its delivery. */
const firstAttempt = (messageId: string, n: number) =>
  message(messageId, {
    orgId: ORG,
    webhookId: WEBHOOK,
    deliveryId: id(n),
    first: { eventId: id(100 + n), event: 'message.created', createdAt: CREATED_AT, payload: `{"n":${n}}` },
  });

/** A later attempt: the delivery is stored, pending, and read by the worker. */
function retry(messageId: string, n: number) {
  fakes.stored.set(id(n), {
    id: id(n),
    orgId: ORG,
    webhookId: WEBHOOK,
    eventId: id(100 + n),
    event: 'message.created',
    status: 'pending',
    attempts: 1,
    responseStatus: 500,
    error: 'http_500',
    createdAt: CREATED_AT,
    lastAttemptAt: CREATED_AT,
    nextAttemptAt: CREATED_AT,
    payload: `{"n":${n}}`,
  });
  return message(messageId, { orgId: ORG, webhookId: WEBHOOK, deliveryId: id(n) });
}

const run = async (...records: SQSRecord[]) => {
  const { handler } = await import('../../functions/workers/webhook-delivery');
  const event: SQSEvent = { Records: records };
  const { batchItemFailures } = await handler(event, lambdaContext('webhook-delivery'));
  return batchItemFailures.map((failure) => failure.itemIdentifier).sort();
};

describe('webhook delivery, one message failing', () => {
  it('reports the malformed job and the attempt that cannot be recorded; the first success is written once', async () => {
    const { deliveries } = await import('../../shared/db/deliveries');
    const { webhooksByIds } = await import('../../shared/db/webhooks');
    const { publishWebhookAttempts } = await import('../../shared/metrics');
    fakes.unrecordable.add(id(3));
    const failed = await run(firstAttempt('a', 1), message('b', '{"orgId":"not a uuid"}'), retry('c', 3));
    expect(failed).toEqual(['b', 'c']);
    // One read of the webhooks, of the jobs that parsed.
    expect(vi.mocked(webhooksByIds).mock.calls).toEqual([[ORG, [WEBHOOK]]]);
    expect(vi.mocked(deliveries.recordFirstSuccesses).mock.calls).toEqual([
      [
        [
          {
            id: id(1),
            orgId: ORG,
            webhookId: WEBHOOK,
            eventId: id(101),
            event: 'message.created',
            status: 'succeeded',
            attempts: 1,
            responseStatus: 200,
            error: null,
            createdAt: CREATED_AT,
            lastAttemptAt: expect.any(String),
            nextAttemptAt: null,
            payload: '{"n":1}',
          },
        ],
      ],
    ]);
    expect(vi.mocked(publishWebhookAttempts).mock.calls).toEqual([
      [
        expect.arrayContaining([
          { outcome: 'succeeded', attempt: 1 },
          { outcome: 'succeeded', attempt: 2 },
        ]),
      ],
    ]);
  });

  it('reports exactly the first successes when their one write fails, not the attempts recorded on their own', async () => {
    fakes.batchWriteFails = true;
    const failed = await run(firstAttempt('a', 1), retry('b', 2), firstAttempt('c', 3));
    expect(failed).toEqual(['a', 'c']);
  });

  it('reports nothing when every attempt is recorded', async () => {
    const { deliveries } = await import('../../shared/db/deliveries');
    expect(await run(firstAttempt('a', 1), retry('b', 2))).toEqual([]);
    expect(deliveries.recordAttempt).toHaveBeenCalledTimes(1);
    expect(deliveries.recordFirstSuccesses).toHaveBeenCalledTimes(1);
  });
});
