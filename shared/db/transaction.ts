/**
 * The one write path for transactions. Every TransactWriteItems of the service is sent by `transact`
 * (test/unit/layering.test.ts holds that), which:
 * - gives each send its own `ClientRequestToken`, so the SDK's own retry of a send whose answer was
 *   lost is answered by DynamoDB as the commit it was, instead of failing its own "must not exist";
 * - builds the actions that ask for it again at each send (`Write.atSend`): a domain event takes the
 *   moment of the send, since the events feed serves an event once it is FEED_SETTLE_MS old and an
 *   event must commit within that of its id, however long the request waited before;
 * - sends again, within the request's retry budget, what AWS cancels for a reason that passes
 *   (another transaction on one of its items, a throttled partition), and answers 503 with
 *   `Retry-After` once the budget is spent: never a 500;
 * - turns a failed condition into the error its action declares.
 *
 * Single-item writes that AWS may refuse for the same passing reasons go through `retryTransient`.
 */
import { randomUUID } from 'node:crypto';
import { type AttributeValue, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { db, tableName } from './client';
import type { Key } from './keys';

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** One action of a transaction, with what its failed condition means to the caller. */
export interface Write {
  action: TransactItem;
  /**
   * The error to raise when this action's condition fails; without one the failure is a conflict to
   * retry. It is given the item as it stood when the action asked for it
   * (`ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`).
   */
  onConditionFailed?: (item?: Record<string, unknown>) => Error;
  /** The action as it is sent, built again at each send: a domain event takes the send's moment. */
  atSend?: () => TransactItem;
}

export class ConcurrentChangeError extends Error {
  constructor() {
    super('The item changed while this write was being prepared');
    this.name = 'ConcurrentChangeError';
  }
}

/**
 * How long the optimistic writes of one request may keep retrying after losing races. The contract
 * answers a write that keeps losing within 2 s (503 `SERVICE_UNAVAILABLE` with `Retry-After`):
 * the budget leaves room for the last attempt's own read and transaction.
 */
export const RETRY_BUDGET_MS = 1_500;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A request's time for retrying optimistic writes, shared by nested retries (an edit that also
 * moves the conversation's preview), measured on the monotonic clock, not the service's (tests
 * shift that one). An attempt starts only when one as long as the last would still end within the
 * budget: under load an attempt takes hundreds of milliseconds, and one started just before the
 * deadline would carry the answer past the contract's 2 s.
 */
export class RetryBudget {
  private readonly deadline: number;
  private attemptStartedAt: number;

  constructor(private readonly budgetMs: number = RETRY_BUDGET_MS) {
    this.attemptStartedAt = performance.now();
    this.deadline = this.attemptStartedAt + budgetMs;
  }

  /**
   * A random pause before the next attempt (full jitter, growing with the attempt, so writers that
   * collided once do not collide again in lockstep). False when the budget would not hold another
   * attempt as long as the one that just lost: give up.
   */
  async pause(attempt: number): Promise<boolean> {
    const now = performance.now();
    const attemptMs = now - this.attemptStartedAt;
    const left = this.deadline - now - attemptMs;
    if (left <= 0) return false;
    // Fair to the oldest: the pause shrinks as the writer's share of its budget runs out, so among
    // writers racing for one item those that have waited longest try again first, and a newcomer
    // does not keep overtaking them.
    const ceilingMs = Math.min(250, 10 * 2 ** Math.min(attempt, 5)) * (left / this.budgetMs);
    await sleep(Math.min(left, Math.random() * ceilingMs));
    this.attemptStartedAt = performance.now();
    return this.attemptStartedAt + attemptMs < this.deadline;
  }
}

/**
 * A short random pause before retrying an optimistic write that lost a race: without it, writers
 * that collided once collide again in lockstep. Grows with the attempt number (full jitter).
 */
export function backoff(attempt: number): Promise<void> {
  const ceilingMs = Math.min(200, 5 * 2 ** Math.min(attempt, 6));
  return new Promise((resolve) => setTimeout(resolve, Math.random() * ceilingMs));
}

/**
 * Errors of a single request that pass: another transaction holds the item, a partition is over its
 * throughput (after the SDK's own retries), or a send with the same token is still in flight.
 */
const TRANSIENT = new Set([
  'TransactionConflictException',
  'TransactionInProgressException',
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
]);

/** Cancellation reasons that pass: the same transaction may simply be sent again. */
const PASSING_REASONS = new Set([
  'None',
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
]);

/**
 * What a passing refusal that outlasted the budget is thrown as: a conflict as ConcurrentChangeError,
 * a throttle as the SDK's own error. The HTTP layer answers both 503 with `Retry-After`, and logs
 * which it was.
 */
function outlasted(error: unknown): Error {
  if (error instanceof TransactionCanceledException) {
    const reasons = error.CancellationReasons ?? [];
    if (reasons.some((reason) => reason.Code === 'TransactionConflict')) return new ConcurrentChangeError();
    return new ThrottledError();
  }
  return error instanceof Error ? error : new ConcurrentChangeError();
}

/** A transaction AWS kept cancelling for throughput (`ThrottlingError`): load, answered 503. */
export class ThrottledError extends Error {
  constructor() {
    super('A partition the transaction writes is over its throughput');
    this.name = 'ThrottlingException';
  }
}

/** True for a failure that passes by itself (`TRANSIENT`). */
function isTransient(error: unknown): boolean {
  return error instanceof Error && TRANSIENT.has(error.name);
}

/**
 * Runs a single-item write (or read) again when AWS refuses it for a reason that passes
 * (`TRANSIENT`), within the request's budget; then 503. Other errors are thrown as they are.
 */
export async function retryTransient<T>(send: () => Promise<T>, budget = new RetryBudget()): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      if (!isTransient(error)) throw error;
      if (!(await budget.pause(attempt))) throw outlasted(error);
    }
  }
}

/** An action with no error of its own for a failed condition: that is a conflict to retry. */
function asWrite(write: Write | TransactItem): Write {
  return 'action' in write ? write : { action: write };
}

/** The actions as sent (see `Write.atSend`). */
function freshActions(writes: readonly Write[]): TransactItem[] {
  return writes.map((write) => write.atSend?.() ?? write.action);
}

/**
 * Runs one TransactWriteItems (≤ 100 actions, all or nothing), sent again within the budget while
 * AWS cancels it for a passing reason. A failed condition becomes the error its action declares,
 * or a ConcurrentChangeError that the caller may retry from a new read.
 */
export async function transact(
  actions: readonly (Write | TransactItem)[],
  options: { budget?: RetryBudget } = {},
): Promise<void> {
  if (actions.length === 0) return;
  const writes = actions.map(asWrite);
  const budget = options.budget ?? new RetryBudget();
  for (let attempt = 1; ; attempt++) {
    try {
      await db.send(
        new TransactWriteCommand({ TransactItems: freshActions(writes), ClientRequestToken: randomUUID() }),
      );
      return;
    } catch (error) {
      if (error instanceof TransactionCanceledException) {
        const reasons = error.CancellationReasons ?? [];
        const failed = reasons.findIndex((reason) => reason.Code === 'ConditionalCheckFailed');
        if (failed >= 0) {
          const item = reasons[failed]?.Item;
          throw (
            writes[failed]?.onConditionFailed?.(item && unmarshall(item as Record<string, AttributeValue>)) ??
            new ConcurrentChangeError()
          );
        }
        if (!reasons.every((reason) => PASSING_REASONS.has(reason.Code ?? 'None'))) throw error;
      } else if (!isTransient(error)) throw error;
      if (!(await budget.pause(attempt))) throw outlasted(error);
    }
  }
}

/**
 * The index of the first action whose condition failed, or undefined when the transaction committed:
 * for writers whose conditions are answers (a name taken, an organization missing) rather than errors.
 */
export async function transactUnlessConditionFails(
  writes: readonly (Write | TransactItem)[],
  options: { budget?: RetryBudget } = {},
): Promise<number | undefined> {
  const checked = writes.map(
    (write, index): Write => ({ ...asWrite(write), onConditionFailed: () => new ConditionFailedAt(index) }),
  );
  try {
    await transact(checked, options);
    return undefined;
  } catch (error) {
    if (error instanceof ConditionFailedAt) return error.index;
    throw error;
  }
}

class ConditionFailedAt extends Error {
  constructor(readonly index: number) {
    super(`The condition of action ${index} failed`);
  }
}

/** A condition that `key` names an existing item, failing the transaction with `error` otherwise. */
export function mustExist(key: Key, error: () => Error): Write {
  return {
    action: {
      ConditionCheck: { TableName: tableName, Key: key, ConditionExpression: 'attribute_exists(pk)' },
    },
    onConditionFailed: error,
  };
}

/**
 * Runs a read-then-write cycle again when it lost a race (ConcurrentChangeError) or met a passing
 * refusal, within one request's retry budget; other errors are thrown, and a race still lost when
 * the budget is spent is a 503.
 */
export async function retryOnConflict<T>(
  cycle: (budget: RetryBudget) => Promise<T>,
  budget = new RetryBudget(),
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await cycle(budget);
    } catch (error) {
      if (!(error instanceof ConcurrentChangeError) && !isTransient(error)) throw error;
      if (!(await budget.pause(attempt))) throw outlasted(error);
    }
  }
}
