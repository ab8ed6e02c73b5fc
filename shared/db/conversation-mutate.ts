import type { Actor } from '../conversations/actor';
import type { StoredConversation } from '../conversations/state';
import { PreconditionFailedError } from '../errors';
import {
  type ChangeFacts,
  implicationsOf,
  impliedWrites,
  verifyOperators,
} from './conversation-implications';
import { conversationStateWrite } from './conversation-item';
import { liveConversation } from './conversation-reads';
import { ConcurrentChangeError, RetryBudget, transact, type Write } from './transaction';

export interface ConversationChange<T> {
  /** The state after the change, or undefined when nothing changes (no write at all). */
  next: StoredConversation | undefined;
  /**
   * Further actions of the same transaction that are not implied by the state (a message's read
   * flag, an edit, a survey's record). What the state change implies is added by `mutate` itself.
   */
  writes?: Write[];
  result: T;
}

export interface MutateOptions {
  /** The client's `If-Match`: a different current version is 412. */
  ifMatch?: number | undefined;
  /** Access rules, checked against every state read (404/403). */
  check?: (conversation: StoredConversation) => void;
  /** A state the caller has just read strongly: the first attempt starts from it instead of reading again. */
  initial?: StoredConversation;
  /** The request's retry time, when the caller retries around this call too. */
  budget?: RetryBudget;
  /** Who acts and what else the request says, for what the change implies (`implicationsOf`). */
  facts?: ChangeFacts;
}

/**
 * Read, change, write with a condition on `rev`, retrying when another writer got there first, for
 * at most the request's retry budget (then 503: the contract's 2 s bound). Every writer of the
 * conversation item but a message post goes through here (or, for many at once, conversation-bulk.ts),
 * so counters and versions never lose an update, and every change carries what it implies. With
 * `ifMatch`, a version that moved on is 412 rather than a retry.
 */
export async function mutate<T>(
  orgId: string,
  conversationId: string,
  change: (current: StoredConversation) => ConversationChange<T> | Promise<ConversationChange<T>>,
  options: MutateOptions = {},
): Promise<T> {
  const budget = options.budget ?? new RetryBudget();
  const verified = new Set<string>();
  for (let attempt = 1; ; attempt++) {
    const current =
      (attempt === 1 ? options.initial : undefined) ?? (await liveConversation(orgId, conversationId));
    options.check?.(current);
    if (options.ifMatch !== undefined && options.ifMatch !== current.version) {
      throw new PreconditionFailedError(current.version);
    }
    const { next, writes = [], result } = await change(current);
    if (!next && writes.length === 0) return result;
    const implied = next ? [implicationsOf(current, next, options.facts)] : [];
    await verifyOperators(orgId, implied, verified);
    const actions = next
      ? [conversationStateWrite(current, next), ...writes, ...impliedWrites(orgId, implied)]
      : writes;
    try {
      await transact(actions, { budget });
      return result;
    } catch (error) {
      if (!(error instanceof ConcurrentChangeError) || !(await budget.pause(attempt))) throw error;
    }
  }
}

export interface UpdateOptions extends ChangeFacts {
  actor: Actor;
  /** The client's `If-Match`: a different current version is 412. */
  ifMatch?: number | undefined;
  /** Access rules, checked against every state read (404/403). */
  check?: (conversation: StoredConversation) => void;
}

/**
 * A change a caller asks for: `change` gives the state after it (from `withChange`) or undefined
 * when it changes nothing. The conversation after the change is returned, or as it is when nothing
 * changed; what the change implies is written with it (`implicationsOf`).
 */
export function update(
  orgId: string,
  conversationId: string,
  change: (
    current: StoredConversation,
  ) => StoredConversation | undefined | Promise<StoredConversation | undefined>,
  options: UpdateOptions,
): Promise<StoredConversation> {
  const { actor, snoozeReason, ifMatch, check } = options;
  return mutate(
    orgId,
    conversationId,
    async (current) => {
      const next = await change(current);
      return { next, result: next ?? current };
    },
    { ifMatch, check, facts: { actor, snoozeReason } },
  );
}
