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
}

export class ConcurrentChangeError extends Error {
  constructor() {
    super('The item changed while this write was being prepared');
    this.name = 'ConcurrentChangeError';
  }
}

/**
 * Runs one TransactWriteItems (≤ 100 actions, all or nothing). A failed condition becomes the
 * error its action declares, or a ConcurrentChangeError that the caller may retry.
 */
export async function transact(writes: readonly Write[]): Promise<void> {
  if (writes.length === 0) return;
  try {
    await db.send(new TransactWriteCommand({ TransactItems: writes.map((write) => write.action) }));
  } catch (error) {
    if (!(error instanceof TransactionCanceledException)) throw error;
    const reasons = error.CancellationReasons ?? [];
    const failed = reasons.findIndex((reason) => reason.Code === 'ConditionalCheckFailed');
    if (failed >= 0) {
      const item = reasons[failed]?.Item;
      throw (
        writes[failed]?.onConditionFailed?.(item && unmarshall(item as Record<string, AttributeValue>)) ??
        new ConcurrentChangeError()
      );
    }
    // Two transactions on the same item at once: one of them is cancelled, and may simply retry.
    if (reasons.some((reason) => reason.Code === 'TransactionConflict')) throw new ConcurrentChangeError();
    throw error;
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
 * Runs a read-then-write cycle again when it lost a race (ConcurrentChangeError), within one
 * request's retry budget; other errors, and a race still lost when the budget is spent, are thrown.
 */
export async function retryOnConflict<T>(cycle: () => Promise<T>): Promise<T> {
  const budget = new RetryBudget();
  for (let attempt = 1; ; attempt++) {
    try {
      return await cycle();
    } catch (error) {
      if (!(error instanceof ConcurrentChangeError) || !(await budget.pause(attempt))) throw error;
    }
  }
}
