import type { OrgCaller } from '../../shared/auth/caller';
import { clock } from '../../shared/clock';
import { actorOf } from '../../shared/conversations/actor';
import { type StoredConversation, withChange } from '../../shared/conversations/state';
import { auditWrite } from '../../shared/db/audit';
import { batchGet } from '../../shared/db/batch';
import { tableName } from '../../shared/db/client';
import { conversationItem, storedConversationOf, toConversation } from '../../shared/db/conversations';
import { eventWrite } from '../../shared/db/events';
import { keys } from '../../shared/db/keys';
import { teamLoadWrites } from '../../shared/db/team-load';
import { ConcurrentChangeError, RetryBudget, transact, type Write } from '../../shared/db/transaction';
import { NotFoundError } from '../../shared/errors';
import { ok, route } from '../../shared/http/route';
import { isUuid } from '../../shared/ids';
import { bulkConversationsBody } from '../../shared/schemas/conversation';
import { ids } from '../../shared/schemas/examples';
import * as z from '../../shared/schemas/zod';

/** Conversations per transaction: each takes its own write plus its events. */
const PER_TRANSACTION = 33;
/** TransactWriteItems' ceiling. */
const MAX_ACTIONS = 100;

async function readAll(orgId: string, ids: readonly string[]): Promise<Map<string, StoredConversation>> {
  const items = await batchGet(
    ids.map((id) => keys.conversation(orgId, id)),
    { consistent: true },
  );
  const found = new Map<string, StoredConversation>();
  for (const item of items) {
    if (!item.deletedAt) found.set(String(item.id), storedConversationOf(item));
  }
  return found;
}

type Change = (current: StoredConversation) => { next: StoredConversation; writes: Write[] } | undefined;

/** The actions of one transaction over `chunk`: each conversation's Put and writes, then the teams' counts. */
function chunkWrites(orgId: string, chunk: readonly StoredConversation[], change: Change): Write[] {
  const changes: { before: StoredConversation; after: StoredConversation }[] = [];
  const writes = chunk.flatMap((current) => {
    const changed = change(current);
    if (!changed) return [];
    changes.push({ before: current, after: changed.next });
    const conversationWrite: Write = {
      action: {
        Put: {
          TableName: tableName,
          Item: conversationItem({ ...changed.next, rev: current.rev + 1 }),
          ConditionExpression: 'rev = :rev',
          ExpressionAttributeValues: { ':rev': current.rev },
        },
      },
    };
    return [conversationWrite, ...changed.writes];
  });
  return [...writes, ...teamLoadWrites(orgId, changes)];
}

/**
 * The longest head of `chunk` whose actions fit one transaction (one count per distinct team
 * joins the conversations' own actions, so many teams make a chunk shorter).
 */
function fitted(orgId: string, chunk: readonly StoredConversation[], change: Change) {
  for (let size = chunk.length; size > 1; size--) {
    const writes = chunkWrites(orgId, chunk.slice(0, size), change);
    if (writes.length <= MAX_ACTIONS) return { size, writes };
  }
  return { size: Math.min(1, chunk.length), writes: chunkWrites(orgId, chunk.slice(0, 1), change) };
}

/**
 * Applies one change to every listed conversation. Every id is checked first, in one read: if any
 * is not a live conversation of the organization the call changes nothing (404 naming them). The
 * changes then commit in transactions of up to 33 conversations, each conditioned on the state read,
 * and a chunk that lost a race is read and applied again; repeating the call converges.
 */
async function applyToAll(
  caller: OrgCaller,
  conversationIds: readonly string[],
  change: Change,
): Promise<number> {
  const ids = [...new Set(conversationIds)];
  const found = await readAll(caller.orgId, ids.filter(isUuid));
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length)
    throw new NotFoundError('Some conversations do not exist in this organization', { ids: missing });
  const budget = new RetryBudget();
  let start = 0;
  while (start < ids.length) {
    const slice = ids.slice(start, start + PER_TRANSACTION);
    let chunk = slice.map((id) => found.get(id) as StoredConversation);
    for (let attempt = 1; ; attempt++) {
      const { size, writes } = fitted(caller.orgId, chunk, change);
      try {
        await transact(writes);
        // Done up to the last conversation committed (those deleted meanwhile before it included).
        const last = chunk[size - 1];
        start = size === chunk.length || !last ? start + slice.length : ids.indexOf(last.id) + 1;
        break;
      } catch (error) {
        if (!(error instanceof ConcurrentChangeError) || !(await budget.pause(attempt))) throw error;
        const fresh = await readAll(
          caller.orgId,
          chunk.map((conversation) => conversation.id),
        );
        // Deleted meanwhile: nothing left to do for those.
        chunk = chunk.flatMap((conversation) => {
          const latest = fresh.get(conversation.id);
          return latest ? [latest] : [];
        });
      }
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
    const closed = await applyToAll(caller, body.conversationIds, (current) => {
      if (current.status === 'closed') return undefined;
      const next = bumped(current, { status: 'closed', snoozedUntil: null });
      const api = toConversation(next);
      return {
        next,
        writes: [
          eventWrite(caller.orgId, 'conversation.updated', api),
          eventWrite(caller.orgId, 'conversation.closed', api),
        ],
      };
    });
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
    const deleted = await applyToAll(caller, body.conversationIds, (current) => {
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
      };
    });
    return ok({ success: true, deleted });
  },
});
