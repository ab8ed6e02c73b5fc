import type { Actor } from '../conversations/actor';
import type { StoredConversation } from '../conversations/state';
import { NotFoundError } from '../errors';
import { isUuid } from '../ids';
import {
  type Implications,
  implicationsOf,
  sharedWrites,
  verifyOperators,
} from './conversation-implications';
import { conversationStateWrite } from './conversation-item';
import { conversationsById } from './conversation-reads';
import { type AuditBy, orgAudit } from './org-audit';
import { ConcurrentChangeError, RetryBudget, transact, type Write } from './transaction';

/** TransactWriteItems takes at most 100 actions. */
const MAX_ACTIONS = 100;

export interface BulkOptions {
  /** Who acts: the audit entries the changes imply name them. */
  actor: Actor;
  /** The organization audit log's entry of each chunk: what happened, and who did it as the log names them. */
  audit: { type: string; by: AuditBy };
}

/** One change for every conversation: the state after it, or undefined to leave that one as it is. */
type BulkChange = (current: StoredConversation) => StoredConversation | undefined;

const readAll = (orgId: string, ids: readonly string[]) =>
  conversationsById(orgId, ids, { consistent: true });

/**
 * Applies one change to every listed conversation, each implying exactly what the same change of
 * one conversation implies (`implicationsOf`). Every id is checked first, in one read: if any is
 * not a live conversation of the organization the call changes nothing (404 naming them). The
 * changes then commit in transactions of up to 100 actions, each conditioned on the state read, and
 * a chunk that lost a race is read and applied again; repeating the call converges. Returns how
 * many distinct conversations it covered.
 */
export async function bulkApply(
  orgId: string,
  conversationIds: readonly string[],
  change: BulkChange,
  options: BulkOptions,
): Promise<number> {
  const ids = [...new Set(conversationIds)];
  const found = await readAll(orgId, ids.filter(isUuid));
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length)
    throw new NotFoundError('Some conversations do not exist in this organization', { ids: missing });
  const budget = new RetryBudget();
  const verified = new Set<string>();
  let pending = ids.map((id) => found.get(id) as StoredConversation);
  let attempt = 1;
  while (pending.length > 0) {
    const { writes, taken, implied } = nextChunk(orgId, pending, change, options);
    await verifyOperators(orgId, implied, verified);
    try {
      await transact(writes);
      pending = pending.slice(taken);
      attempt = 1;
    } catch (error) {
      if (!(error instanceof ConcurrentChangeError) || !(await budget.pause(attempt++))) throw error;
      const chunk = pending.slice(0, taken);
      const fresh = await readAll(
        orgId,
        chunk.map((conversation) => conversation.id),
      );
      // Deleted meanwhile: nothing left to do for those.
      pending = [
        ...chunk.flatMap((conversation) => fresh.get(conversation.id) ?? []),
        ...pending.slice(taken),
      ];
    }
  }
  return ids.length;
}

/**
 * The next transaction: the longest run of `pending` whose actions fit in one (each changed
 * conversation's Update on `rev` and its own implied actions, then one open-conversation count per
 * distinct team, and the chunk's audit-log entry: a close chunk without teams is 33 × 3 + 1 = 100
 * actions; many teams take fewer per chunk).
 */
function nextChunk(
  orgId: string,
  pending: readonly StoredConversation[],
  change: BulkChange,
  options: BulkOptions,
): { writes: Write[]; taken: number; implied: Implications[] } {
  const own: Write[] = [];
  const implied: Implications[] = [];
  let taken = 0;
  for (const current of pending) {
    const next = change(current);
    const these = next && implicationsOf(current, next, { actor: options.actor });
    const writes = next && these ? [conversationStateWrite(current, next), ...these.actions] : [];
    const shared = sharedWrites(orgId, these ? [...implied, these] : implied).length;
    // One action is the chunk's audit entry.
    if (taken > 0 && own.length + writes.length + shared > MAX_ACTIONS - 1) break;
    own.push(...writes);
    if (these) implied.push(these);
    taken++;
  }
  const chunkIds = pending.slice(0, taken).map((conversation) => conversation.id);
  return {
    writes: [...own, ...sharedWrites(orgId, implied), chunkAudit(orgId, options, chunkIds)],
    taken,
    implied,
  };
}

/**
 * The audit-log entry of one chunk, in the chunk's own transaction: a bulk call of more than one
 * chunk records one entry per chunk, each naming the conversations it committed.
 */
function chunkAudit(orgId: string, options: BulkOptions, conversationIds: string[]): Write {
  return {
    action: orgAudit.write(orgId, {
      ...options.audit.by,
      type: options.audit.type,
      target: { type: 'conversations', id: conversationIds[0] ?? '' },
      details: { conversationIds },
    }),
  };
}
