import { TransactionCanceledException, TransactionConflictException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  GetCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { conversations } from '../../shared/db/conversations';
import { eventWrite } from '../../shared/db/events';
import {
  ConcurrentChangeError,
  RETRY_BUDGET_MS,
  RetryBudget,
  ThrottledError,
  transact,
} from '../../shared/db/transaction';
import { updateExisting } from '../../shared/db/update';
import { ok, route } from '../../shared/http/route';
import { createHandler } from '../../shared/http/stack';
import { logger } from '../../shared/logger';
import { conversationExample, ids, visitorExample } from '../../shared/schemas/examples';
import * as z from '../../shared/schemas/zod';
import { apiGatewayEvent, lambdaContext } from './helpers/apigw-event';
import { apiKeyFixture, batchGetFrom, organizationItem } from './helpers/auth-items';

const ddb = mockClient(DynamoDBDocumentClient);
afterAll(() => {
  ddb.restore();
  vi.restoreAllMocks();
});

/** Every transaction loses to another writer of the same conversation, forever. */
function alwaysContended(attemptMs = 100) {
  ddb.reset();
  // The rate limit's lease of the shared window.
  ddb.on(UpdateCommand).resolves({ Attributes: { used: 1 } });
  ddb.on(GetCommand).resolves({ Item: { ...conversationExample, rev: 7 } });
  // A contended transaction is not instant: each attempt costs a round trip before it is cancelled.
  ddb.on(TransactWriteCommand).callsFake(async () => {
    await new Promise((resolve) => setTimeout(resolve, attemptMs));
    throw new TransactionCanceledException({
      message: 'Transaction cancelled',
      $metadata: {},
      CancellationReasons: [{ Code: 'TransactionConflict' }],
    });
  });
}

const touch = () =>
  conversations.mutate(ids.organization, ids.conversation, (current) => ({
    next: { ...current, title: `${current.title}!` },
    result: undefined,
  }));

/**
 * Runs `work` on a fake clock (timers and `performance`) to its end, so the time it took is the
 * time its own pauses and the mocked round trips add up to, not the machine's: a loaded machine
 * cannot fail these tests, and a change that overruns the budget fails them anywhere.
 */
async function onFakeClock<T>(work: () => Promise<T>) {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  try {
    const started = performance.now();
    let elapsedMs = Number.NaN;
    const settled = Promise.allSettled([
      work().finally(() => {
        elapsedMs = performance.now() - started;
      }),
    ]);
    // Far past any budget: by then the work has settled.
    await vi.advanceTimersByTimeAsync(10_000);
    const [outcome] = await settled;
    if (!outcome) throw new Error('no outcome');
    return { outcome, elapsedMs };
  } finally {
    vi.useRealTimers();
  }
}

/** The reason a settled outcome failed with (undefined when it did not fail). */
const failureOf = (outcome: PromiseSettledResult<unknown>): unknown =>
  outcome.status === 'rejected' ? outcome.reason : undefined;

describe('a write that keeps losing to concurrent writers', () => {
  beforeEach(() => alwaysContended());

  it('retries with pauses for the request’s retry budget, then gives up well within 2 s', async () => {
    const { outcome, elapsedMs } = await onFakeClock(touch);
    expect(failureOf(outcome)).toBeInstanceOf(ConcurrentChangeError);
    // It stops once another attempt like the last (100 ms) would no longer end within the budget.
    expect(elapsedMs).toBeGreaterThan(RETRY_BUDGET_MS - 200);
    expect(elapsedMs).toBeLessThanOrEqual(RETRY_BUDGET_MS);
    const attempts = ddb.commandCalls(TransactWriteCommand).length;
    expect(attempts).toBeGreaterThan(3);
    // A conflict cancels nothing that was read: the same transaction is sent again (its conditions
    // are checked anew), each send with a request token of its own, not read again each time.
    expect(ddb.commandCalls(GetCommand).length).toBeLessThan(attempts / 2);
    const tokens = ddb
      .commandCalls(TransactWriteCommand)
      .map((call) => call.args[0].input.ClientRequestToken);
    expect(new Set(tokens).size).toBe(attempts);
    expect(tokens.every((token) => typeof token === 'string' && token.length > 0)).toBe(true);
  });

  it('does not start an attempt that would carry the answer past 2 s when attempts are slow', async () => {
    // Under load an attempt can take most of a second: the third would have ended after 2 s.
    alwaysContended(700);
    const { outcome, elapsedMs } = await onFakeClock(touch);
    expect(failureOf(outcome)).toBeInstanceOf(ConcurrentChangeError);
    expect(elapsedMs).toBeLessThan(2_000);
    expect(ddb.commandCalls(TransactWriteCommand).length).toBe(2);
  });

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After', async () => {
    const key = apiKeyFixture();
    ddb.on(BatchGetCommand).callsFake(batchGetFrom([key.item, organizationItem(key.orgId)]));
    vi.spyOn(logger, 'info').mockImplementation(() => undefined);
    const warned = vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    const failed = vi.spyOn(logger, 'error').mockImplementation(() => undefined);
    const handler = createHandler([
      route({
        method: 'POST',
        path: '/api/busy',
        operationId: 'busy',
        summary: 'Touch a conversation',
        tag: 'Test',
        callers: ['apiKey'],
        response: { status: 200, schema: z.unknown(), description: 'Touched' },
        handle: async () => ok(await touch()),
      }),
    ]);
    const { outcome, elapsedMs } = await onFakeClock(() =>
      handler(
        apiGatewayEvent({ method: 'POST', resource: '/api/busy', headers: { 'X-API-Key': key.token } }),
        lambdaContext(),
      ),
    );
    expect(elapsedMs).toBeLessThan(2_000);
    if (outcome.status !== 'fulfilled') throw outcome.reason;
    const response = outcome.value;
    expect(response.statusCode).toBe(503);
    expect(JSON.parse(response.body).error.code).toBe('SERVICE_UNAVAILABLE');
    expect(response.headers?.['Retry-After']).toBe('1');
    // Load shed is a warning with its cause, not an error with a stack.
    expect(warned).toHaveBeenCalledWith(
      'request shed',
      expect.objectContaining({ cause: 'ConcurrentChangeError' }),
    );
    expect(failed).not.toHaveBeenCalled();
  });
});

describe('retries among writers of one item', () => {
  it('are fair to the oldest: a writer that has waited longer pauses less before trying again', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'performance'] });
    vi.spyOn(Math, 'random').mockReturnValue(0.99);
    const delays: number[] = [];
    const realSetTimeout = globalThis.setTimeout;
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => {
      delays.push(ms ?? 0);
      return realSetTimeout(fn, ms);
    }) as typeof setTimeout);
    try {
      /** The pause before the third attempt, after `waitedMs` of 50 ms attempts and their pauses. */
      const thirdPauseAfter = async (waitedMs: number) => {
        const budget = new RetryBudget();
        const started = performance.now();
        while (performance.now() - started < waitedMs) {
          vi.advanceTimersByTime(50);
          const pausing = budget.pause(1);
          await vi.advanceTimersByTimeAsync(100);
          await pausing;
        }
        vi.advanceTimersByTime(50);
        delays.length = 0;
        const pausing = budget.pause(3);
        await vi.advanceTimersByTimeAsync(300);
        expect(await pausing).toBe(true);
        return delays.at(-1) ?? Number.NaN;
      };
      const newcomer = await thirdPauseAfter(0);
      const veteran = await thirdPauseAfter(900);
      expect(veteran).toBeLessThan(newcomer / 2);
    } finally {
      spy.mockRestore();
      vi.useRealTimers();
    }
  });
});

/** A transaction cancelled `times` times for `code`, then committed. */
function cancelledThenCommitted(times: number, code: 'TransactionConflict' | 'ThrottlingError') {
  ddb.reset();
  let calls = 0;
  ddb.on(TransactWriteCommand).callsFake(async () => {
    calls += 1;
    if (calls <= times)
      throw new TransactionCanceledException({
        message: 'Transaction cancelled',
        $metadata: {},
        CancellationReasons: [{ Code: code }, { Code: 'None' }],
      });
    return {};
  });
}

/** The answer of an API-key request whose handling ends as `handle` does. */
async function answerOf(handle: () => Promise<unknown>) {
  const key = apiKeyFixture();
  ddb.on(UpdateCommand).resolves({ Attributes: { used: 1 } });
  ddb.on(BatchGetCommand).callsFake(batchGetFrom([key.item, organizationItem(key.orgId)]));
  vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
  const handler = createHandler([
    route({
      method: 'POST',
      path: '/api/busy',
      operationId: 'busy',
      summary: 'Write something',
      tag: 'Test',
      callers: ['apiKey'],
      response: { status: 200, schema: z.unknown(), description: 'Written' },
      handle: async () => ok(await handle()),
    }),
  ]);
  return handler(
    apiGatewayEvent({ method: 'POST', resource: '/api/busy', headers: { 'X-API-Key': key.token } }),
    lambdaContext(),
  );
}

describe('the one write path', () => {
  it('sends a transaction again when AWS cancels it for a conflict or a throttled partition', async () => {
    for (const code of ['TransactionConflict', 'ThrottlingError'] as const) {
      cancelledThenCommitted(2, code);
      await transact([
        { action: { Put: { TableName: 't', Item: { pk: 'a', sk: 'b' } } } },
        { action: { Put: { TableName: 't', Item: { pk: 'a', sk: 'c' } } } },
      ]);
      expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(3);
    }
  });

  it('answers 503, never 500, when a partition stays throttled past the budget', async () => {
    cancelledThenCommitted(Number.POSITIVE_INFINITY, 'ThrottlingError');
    const { outcome, elapsedMs } = await onFakeClock(() =>
      transact([{ action: { Put: { TableName: 't', Item: { pk: 'a', sk: 'b' } } } }]),
    );
    expect(elapsedMs).toBeLessThanOrEqual(RETRY_BUDGET_MS);
    const error = failureOf(outcome);
    expect(error).toBeInstanceOf(ThrottledError);
    const answer = await answerOf(() => Promise.reject(error));
    expect(answer.statusCode).toBe(503);
    expect(JSON.parse(answer.body).error.code).toBe('SERVICE_UNAVAILABLE');
    expect(answer.headers?.['Retry-After']).toBe('1');
  });

  it('creates a conversation through conflicts instead of answering 503 at the first one', async () => {
    cancelledThenCommitted(3, 'TransactionConflict');
    const created = await conversations.create(ids.organization, { kind: 'apiKey' }, visitorExample, {
      message: 'Hello',
    });
    expect(created.id).toBeTruthy();
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(4);
  });

  it('stamps the domain events of each send with its moment, so the feed never passes an event', async () => {
    cancelledThenCommitted(1, 'TransactionConflict');
    const write = eventWrite(ids.organization, 'conversation.updated', { id: ids.conversation });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await transact([write]);
    const sent = ddb
      .commandCalls(TransactWriteCommand)
      .map((call) => call.args[0].input.TransactItems?.[0]?.Put?.Item as Record<string, string>);
    expect(sent).toHaveLength(2);
    // Built before the pause; each send carries a new id and time, later than the one built.
    const built = write.action.Put?.Item as Record<string, string>;
    for (const item of sent) expect(String(item.timestamp) > String(built.timestamp)).toBe(true);
    expect(sent[1]?.id).not.toBe(sent[0]?.id);
    expect(sent[1]?.sk).toBe(`EVENT#${sent[1]?.id}`);
  });
});

describe('a single write that meets a transaction on its item', () => {
  it('is sent again within the budget (TransactionConflictException), then answers the item', async () => {
    ddb.reset();
    let calls = 0;
    ddb.on(UpdateCommand).callsFake(async () => {
      calls += 1;
      if (calls <= 2)
        throw new TransactionConflictException({
          message: 'Transaction is ongoing for the item',
          $metadata: {},
        });
      return { Attributes: { pk: 'a', sk: 'b', name: 'renamed' } };
    });
    const updated = await updateExisting({ pk: 'a', sk: 'b' }, { name: 'renamed' });
    expect(updated?.name).toBe('renamed');
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(3);
  });

  it('answers 503, never 500, when the transaction holds the item past the budget', async () => {
    ddb.reset();
    ddb
      .on(UpdateCommand)
      .rejects(
        new TransactionConflictException({ message: 'Transaction is ongoing for the item', $metadata: {} }),
      );
    const { outcome, elapsedMs } = await onFakeClock(() =>
      updateExisting({ pk: 'a', sk: 'b' }, { name: 'x' }),
    );
    expect(elapsedMs).toBeLessThanOrEqual(RETRY_BUDGET_MS);
    const error = failureOf(outcome);
    expect(error).toBeDefined();
    const answer = await answerOf(() => Promise.reject(error));
    expect(answer.statusCode).toBe(503);
    expect(answer.headers?.['Retry-After']).toBe('1');
  });
});
