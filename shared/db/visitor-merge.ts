import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import { ConflictError, NotFoundError, ValidationError } from '../errors';
import { assertFreeJson } from '../schemas/free-json';
import { visitorProjection } from '../schemas/projections';
import type { Visitor, VisitorProfile } from '../schemas/visitor';
import { db, tableName } from './client';
import { rewriteConversation } from './conversations';
import { eventWrite } from './events';
import { INDEX_LAG_MS, untilIndexed } from './index-lag';
import { keys } from './keys';
import { type AuditBy, orgAudit } from './org-audit';
import { project } from './project';
import { ConcurrentChangeError, RetryBudget, transact, type Write } from './transaction';
import { profileOf, type StoredVisitor } from './visitor-record';
import { conversationCountOf, getStored, visitorPut } from './visitor-store';

const toVisitor = project<Visitor>(visitorProjection);

/** Conversations a mover reads per Query page and moves at once. */
export const MOVE_PAGE = 25;
/** Hops followed when a target was itself merged later (A → B, then B → C: A's conversations go to C). */
const MAX_HOPS = 5;
/** Attempts at one conversation's move that keeps losing its `rev` race to other writers. */
const MOVE_ATTEMPTS = 8;

const mergedMetadata = (target: StoredVisitor, source: StoredVisitor) => ({
  ...source.metadata,
  ...target.metadata,
});

const earlier = (a: string, b: string) => (a < b ? a : b);
const later = (a: string, b: string) => (a > b ? a : b);

/**
 * The target after the merge: its own values win; a profile field it lacks is taken from the
 * source (name, e-mail, phone, external id), metadata keys it lacks too; sessions add up; first and
 * last sightings span both.
 */
function mergedTarget(target: StoredVisitor, source: StoredVisitor, now: string): StoredVisitor {
  return {
    ...target,
    name: target.name ?? source.name,
    email: target.email ?? source.email,
    phone: target.phone ?? source.phone,
    externalId: target.externalId ?? source.externalId,
    metadata: mergedMetadata(target, source),
    totalSessions: target.totalSessions + source.totalSessions,
    firstSeenAt: earlier(target.firstSeenAt, source.firstSeenAt),
    lastSeenAt: later(target.lastSeenAt, source.lastSeenAt),
    updatedAt: now,
    version: target.version + 1,
    rev: target.rev + 1,
  };
}

/**
 * The source's external id: handed to the target when it has none (the guard now names the
 * target), released otherwise. Either way the source no longer answers to it.
 */
function externalIdWrites(orgId: string, target: StoredVisitor, source: StoredVisitor): Write[] {
  if (source.externalId === null) return [];
  const Key = keys.visitorExternalId(orgId, source.externalId);
  const ownedBySource = { ConditionExpression: 'visitorId = :source', ':source': source.id };
  if (target.externalId === null) {
    return [
      {
        action: {
          Update: {
            TableName: tableName,
            Key,
            UpdateExpression: 'SET visitorId = :target',
            ConditionExpression: ownedBySource.ConditionExpression,
            ExpressionAttributeValues: { ':target': target.id, ':source': source.id },
          },
        },
      },
    ];
  }
  return [
    {
      action: {
        Delete: {
          TableName: tableName,
          Key,
          ConditionExpression: ownedBySource.ConditionExpression,
          ExpressionAttributeValues: { ':source': source.id },
        },
      },
    },
  ];
}

function refuse(target: StoredVisitor, source: StoredVisitor): void {
  if (source.mergedInto !== null)
    throw new ConflictError('The source visitor was already merged', {
      reason: 'already_merged',
      field: 'sourceVisitorId',
    });
  if (target.mergedInto !== null)
    throw new ConflictError('The target visitor was merged into another visitor', {
      reason: 'already_merged',
      field: 'id',
    });
  if (source.erasedAt !== null || target.erasedAt !== null)
    throw new ConflictError('An erased visitor cannot be merged', {
      reason: 'visitor_erased',
      field: source.erasedAt !== null ? 'sourceVisitorId' : 'id',
    });
}

/**
 * The visitor a merged visitor's conversations go to: its `mergedInto`, followed while that one was
 * merged on too. Undefined when the visitor was not merged.
 */
async function finalTarget(orgId: string, source: StoredVisitor): Promise<StoredVisitor | undefined> {
  let current = source;
  for (let hop = 0; hop < MAX_HOPS && current.mergedInto !== null; hop++) {
    const next = await getStored(orgId, current.mergedInto);
    if (!next) return undefined;
    current = next;
  }
  return current.id === source.id || current.mergedInto !== null ? undefined : current;
}

/**
 * Moves one conversation from `sourceId` to `target` (strongly consistent read, then an Update on
 * its `rev`): `visitorId` and the embedded visitor change, and so do the keys built from them (the
 * visitor's listing entry, gsi4) and from `updatedAt` (the sync entry, gsi1), so an incremental
 * sync sees the move. `version` stays: nothing an integrator edits changed. A conversation that
 * is no longer the source's (moved already, deleted) is left alone: moves are idempotent.
 */
async function moveConversation(
  orgId: string,
  conversationId: string,
  sourceId: string,
  target: Visitor,
): Promise<boolean> {
  return rewriteConversation(
    orgId,
    conversationId,
    (current) =>
      current.deletedAt || current.visitorId !== sourceId
        ? undefined
        : { ...current, visitorId: target.id, visitor: target, updatedAt: clock.nowIso() },
    MOVE_ATTEMPTS,
  );
}

export interface MoveProgress {
  moved: number;
  /** True when the source's listing had no conversation left to move. */
  done: boolean;
  /** False when there is no merged source (missing, or not merged): nothing to look at again. */
  merged: boolean;
}

export const visitorMerge = {
  /**
   * The merge itself, one transaction: the source marked (`mergedInto`, out of the listings, its
   * external id handed over or released), the target merged (metadata, sessions, missing profile
   * fields), `visitor.merged` with the target, and the audit entry. Both visitors are written on
   * the `rev` they were read at, so of two merges racing for a visitor one wins and the other
   * reads again (and answers 409). The conversations move afterwards (`moveConversations`).
   */
  async begin(orgId: string, targetId: string, sourceId: string, by: AuditBy): Promise<StoredVisitor> {
    if (targetId === sourceId)
      throw new ConflictError('A visitor cannot be merged into itself', {
        reason: 'same_visitor',
        field: 'sourceVisitorId',
      });
    const budget = new RetryBudget();
    for (let attempt = 1; ; attempt++) {
      const [target, source] = await Promise.all([getStored(orgId, targetId), getStored(orgId, sourceId)]);
      if (!target) throw new NotFoundError('Visitor not found');
      if (!source) throw ValidationError.field('sourceVisitorId', 'No such visitor in this organization');
      refuse(target, source);
      const now = clock.nowIso();
      const nextTarget = mergedTarget(target, source, now);
      assertFreeJson('sourceVisitorId', nextTarget.metadata);
      const nextSource: StoredVisitor = {
        ...source,
        externalId: null,
        mergedInto: target.id,
        updatedAt: now,
        version: source.version + 1,
        rev: source.rev + 1,
      };
      const [targetCount, sourceCount] = await Promise.all([
        conversationCountOf(orgId, targetId),
        conversationCountOf(orgId, sourceId),
      ]);
      try {
        await transact([
          { action: visitorPut(orgId, target, nextTarget) },
          { action: visitorPut(orgId, source, nextSource) },
          ...externalIdWrites(orgId, target, source),
          eventWrite(orgId, 'visitor.merged', profileOf(nextTarget, targetCount + sourceCount)),
          {
            action: orgAudit.write(orgId, {
              ...by,
              type: 'visitor.merged',
              target: { type: 'visitor', id: target.id },
              details: { sourceVisitorId: source.id, conversations: sourceCount },
            }),
          },
        ]);
        return nextTarget;
      } catch (error) {
        if (!(error instanceof ConcurrentChangeError) || !(await budget.pause(attempt))) throw error;
      }
    }
  },

  /**
   * Moves the merged source's conversations to its target in pages of MOVE_PAGE (a Query of the
   * source's listing entries, then the moves, 25 at once), until none is left or `deadlineMs`
   * (monotonic, `performance.now()`) passes. Each move is its own write, idempotent: a crash
   * anywhere leaves some conversations moved and the others still listed under the source, and
   * the next run moves those. Moved entries leave the source's listing, so a new run starts from
   * its beginning; within one run the pages go forward (the index may still show a moved entry
   * for a moment: its strongly consistent read skips it).
   */
  async moveConversations(orgId: string, sourceId: string, deadlineMs: number): Promise<MoveProgress> {
    const source = await getStored(orgId, sourceId);
    if (!source || source.mergedInto === null) return { moved: 0, done: true, merged: false };
    const target = await finalTarget(orgId, source);
    if (!target) return { moved: 0, done: true, merged: false };
    const snapshot = toVisitor(profileOf(target, 0));
    const partition = keys.conversationListPartition.visitor(orgId, sourceId);
    let moved = 0;
    let startKey: Record<string, unknown> | undefined;
    do {
      const { Items = [], LastEvaluatedKey } = await db.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: partition.index,
          KeyConditionExpression: 'gsi4pk = :pk',
          ExpressionAttributeValues: { ':pk': partition.pk },
          // The listing's sort key is the conversation id.
          ProjectionExpression: 'pk, sk, gsi4pk, gsi4sk',
          Limit: MOVE_PAGE,
          ExclusiveStartKey: startKey,
        }),
      );
      const results = await Promise.all(
        Items.map((item) => moveConversation(orgId, String(item.gsi4sk), sourceId, snapshot)),
      );
      moved += results.filter(Boolean).length;
      startKey = LastEvaluatedKey;
      if (startKey && performance.now() >= deadlineMs) return { moved, done: false, merged: true };
    } while (startKey);
    return { moved, done: true, merged: true };
  },

  /**
   * The moves a merge request makes itself, and the target as its answer shows it. Both the source's
   * listing the moves walk and the target's listing that counts its conversations are index
   * partitions, which lag: a conversation started for the source a moment before the merge may
   * not be listed yet, and a conversation just moved is not counted under the target yet. One pass
   * right after the commit (`committedAtMs`) and a count at once (the worker's own pass and its
   * sweep 10 s later come too late for the answer) missed both. So:
   * 1. a first pass at once moves what the listing shows (nearly always all);
   * 2. once INDEX_LAG_MS has passed since the commit, the listing shows every conversation the
   *    source had then: a second pass moves the rest (the visitor-jobs worker, started by the same
   *    commit, may move some meanwhile, out of sight of both passes);
   * 3. once INDEX_LAG_MS has passed since the second pass, every move (this request's and the
   *    worker's) shows under the target, and the count is exact.
   * That is two waits of INDEX_LAG_MS (about 4 s in all) and one more Query of the source's listing
   * (keys only); no more writes. A merge whose first pass outruns `deadlineMs` answers with the
   * count as it stands (the worker goes on, as documented).
   */
  async moveAndCount(
    orgId: string,
    target: StoredVisitor,
    sourceId: string,
    committedAtMs: number,
    deadlineMs: number,
  ): Promise<VisitorProfile> {
    const first = await visitorMerge.moveConversations(orgId, sourceId, deadlineMs);
    if (first.done && first.merged) {
      await untilIndexed(committedAtMs);
      const secondAtMs = clock.nowMs();
      const second = await visitorMerge.moveConversations(orgId, sourceId, deadlineMs + INDEX_LAG_MS);
      if (second.done) await untilIndexed(secondAtMs);
    }
    return visitorMerge.profile(orgId, target);
  },

  /** The target as the API shows it, its conversations counted now (through its listing: see `moveAndCount`). */
  async profile(orgId: string, target: StoredVisitor): Promise<VisitorProfile> {
    return profileOf(target, await conversationCountOf(orgId, target.id));
  },
};
