import type { OrgCaller } from '../../shared/auth/caller';
import { clock } from '../../shared/clock';
import { actorOf } from '../../shared/conversations/actor';
import { type StoredConversation, withChange } from '../../shared/conversations/state';
import { auditWrite } from '../../shared/db/audit';
import { conversationStateWrite, conversationsById, toConversation } from '../../shared/db/conversations';
import { eventWrite } from '../../shared/db/events';
import { type Increment, incrementWrites } from '../../shared/db/increments';
import { auditActorOf, orgAudit } from '../../shared/db/org-audit';
import { stats } from '../../shared/db/stats';
import { teamLoadWrites } from '../../shared/db/team-load';
import { ConcurrentChangeError, RetryBudget, transact, type Write } from '../../shared/db/transaction';
import { NotFoundError } from '../../shared/errors';
import { ok, route } from '../../shared/http/route';
import { isUuid } from '../../shared/ids';
import { bulkConversationsBody } from '../../shared/schemas/conversation';
import { ids } from '../../shared/schemas/examples';
import * as z from '../../shared/schemas/zod';

/** TransactWriteItems takes at most 100 actions. */
const MAX_ACTIONS = 100;

type Change = (
  current: StoredConversation,
) => { next: StoredConversation; writes: Write[]; increments?: Increment[] } | undefined;

const readAll = (orgId: string, ids: readonly string[]) =>
  conversationsById(orgId, ids, { consistent: true });

/**
 * The next transaction: the longest run of `pending` whose actions fit in one (each changed
 * conversation's Update on `rev` and its events, then the chunk's counters merged per item, and one
 * open-conversation count per distinct team: a close chunk without teams is 33 × 3 + 1 = 100
 * actions; many teams, or deletions of conversations with surveys, take fewer per chunk).
 */
function nextChunk(
  orgId: string,
  pending: readonly StoredConversation[],
  change: Change,
  audit: ChunkAudit,
): { writes: Write[]; taken: number } {
  const own: Write[] = [];
  const moved: { before: StoredConversation; after: StoredConversation }[] = [];
  let increments: Increment[] = [];
  let taken = 0;
  for (const current of pending) {
    const changed = change(current);
    const writes: Write[] = changed ? [conversationStateWrite(current, changed.next), ...changed.writes] : [];
    const withThese = [...increments, ...(changed?.increments ?? [])];
    const withMoved = changed ? [...moved, { before: current, after: changed.next }] : moved;
    const counters = incrementWrites(withThese).length + teamLoadWrites(orgId, withMoved).length;
    // One action is the chunk's audit entry.
    if (taken > 0 && own.length + writes.length + counters > MAX_ACTIONS - 1) break;
    own.push(...writes);
    increments = withThese;
    if (changed) moved.push({ before: current, after: changed.next });
    taken++;
  }
  const chunkIds = pending.slice(0, taken).map((conversation) => conversation.id);
  return {
    writes: [...own, ...incrementWrites(increments), ...teamLoadWrites(orgId, moved), audit(chunkIds)],
    taken,
  };
}

/**
 * The audit-log entry of one chunk, in the chunk's own transaction: a bulk call of more than one
 * chunk records one entry per chunk, each naming the conversations it committed.
 */
type ChunkAudit = (conversationIds: string[]) => Write;

function bulkAudit(caller: OrgCaller, type: string): ChunkAudit {
  const by = auditActorOf(caller);
  return (conversationIds) => ({
    action: orgAudit.write(caller.orgId, {
      ...by,
      type,
      target: { type: 'conversations', id: conversationIds[0] ?? '' },
      details: { conversationIds },
    }),
  });
}

/**
 * Applies one change to every listed conversation. Every id is checked first, in one read: if any
 * is not a live conversation of the organization the call changes nothing (404 naming them). The
 * changes then commit in transactions of up to 100 actions, each conditioned on the state read, and
 * a chunk that lost a race is read and applied again; repeating the call converges.
 */
async function applyToAll(
  caller: OrgCaller,
  conversationIds: readonly string[],
  change: Change,
  audit: ChunkAudit,
): Promise<number> {
  const ids = [...new Set(conversationIds)];
  const found = await readAll(caller.orgId, ids.filter(isUuid));
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length)
    throw new NotFoundError('Some conversations do not exist in this organization', { ids: missing });
  const budget = new RetryBudget();
  let pending = ids.map((id) => found.get(id) as StoredConversation);
  let attempt = 1;
  while (pending.length > 0) {
    const { writes, taken } = nextChunk(caller.orgId, pending, change, audit);
    try {
      await transact(writes);
      pending = pending.slice(taken);
      attempt = 1;
    } catch (error) {
      if (!(error instanceof ConcurrentChangeError) || !(await budget.pause(attempt++))) throw error;
      const chunk = pending.slice(0, taken);
      const fresh = await readAll(
        caller.orgId,
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

const bumped = (current: StoredConversation, changes: Partial<StoredConversation>) =>
  withChange(current, changes, clock.nowIso());

export const bulkClose = route({
  method: 'POST',
  path: '/api/conversations/bulk-close',
  operationId: 'bulkCloseConversations',
  summary: 'Close conversations in bulk',
  description:
    '1 to 100 ids. If any id is not a conversation of the organization, nothing changes: 404 with `details.ids`. Conversations already closed stay as they are; `closed` counts the distinct conversations that are closed after the call, so a repeat answers the same.',
  tag: 'Conversations',
  scope: 'conversations:write',
  adminOnly: true,
  callers: ['apiKey', 'operator'],
  body: bulkConversationsBody,
  response: {
    status: 200,
    schema: z.object({ success: z.boolean(), closed: z.int() }),
    description: 'Closed',
  },
  errors: [404],
  examples: {
    request: { conversationIds: [ids.conversation] },
    response: { success: true, closed: 1 },
  },
  handle: async ({ caller, body }) => {
    const closed = await applyToAll(
      caller,
      body.conversationIds,
      (current) => {
        if (current.status === 'closed') return undefined;
        const next = bumped(current, { status: 'closed', snoozedUntil: null });
        const api = toConversation(next);
        return {
          next,
          writes: [
            eventWrite(caller.orgId, 'conversation.updated', api),
            eventWrite(caller.orgId, 'conversation.closed', api),
          ],
          increments: stats.conversationClosed(next),
        };
      },
      bulkAudit(caller, 'conversation.bulk_closed'),
    );
    return ok({ success: true, closed });
  },
});

export const bulkDelete = route({
  method: 'POST',
  path: '/api/conversations/bulk-delete',
  operationId: 'bulkDeleteConversations',
  summary: 'Delete conversations in bulk',
  description:
    '1 to 100 ids. If any id is not a conversation of the organization, nothing changes: 404 with `details.ids`. Each conversation is soft-deleted at once (404 everywhere from then on, gone from listings); its messages are then marked deleted in the background, in resumable steps, however many there are. A repeat after success is 404, as the conversations no longer exist.',
  tag: 'Conversations',
  scope: 'conversations:write',
  adminOnly: true,
  callers: ['apiKey', 'operator'],
  body: bulkConversationsBody,
  response: {
    status: 200,
    schema: z.object({ success: z.boolean(), deleted: z.int() }),
    description: 'Deleted',
  },
  errors: [404],
  examples: {
    request: { conversationIds: [ids.conversation] },
    response: { success: true, deleted: 1 },
  },
  handle: async ({ caller, body }) => {
    const actor = actorOf(caller);
    const deleted = await applyToAll(
      caller,
      body.conversationIds,
      (current) => {
        const deletedAt = clock.nowIso();
        const next = bumped(current, { deletedAt });
        return {
          next,
          writes: [
            eventWrite(caller.orgId, 'conversation.deleted', {
              id: current.id,
              deletedAt,
              version: next.version,
            }),
            auditWrite(caller.orgId, current.id, 'DELETION', { type: 'conversation.deleted', actor }),
          ],
          // Surveys of deleted conversations do not count in CSAT any more.
          increments: current.activeSurvey
            ? stats.surveyCounted(caller.orgId, current.id, current.activeSurvey, -1)
            : [],
        };
      },
      bulkAudit(caller, 'conversation.bulk_deleted'),
    );
    return ok({ success: true, deleted });
  },
});
