import type { Actor } from '../conversations/actor';
import type { StoredConversation } from '../conversations/state';
import { ValidationError } from '../errors';
import type { Conversation } from '../schemas/conversation';
import { assignmentEntry, auditWrite } from './audit';
import { toConversation } from './conversation-item';
import { eventWrite, realtimeWrite } from './events';
import { operators } from './operators';
import { teamLoadWrites } from './team-load';
import type { Write } from './transaction';

/**
 * What a change of a conversation implies besides the conversation's own Update, decided here from
 * its states before and after (and the few facts only the request knows), so a change means the
 * same whichever writer makes it: a close by PATCH and a close in bulk emit the same events and move
 * the same team counts. Every writer on `rev` (conversation-mutate.ts, conversation-bulk.ts) adds
 * these. (The day counters follow the same two states, from the stream: stats-stream.ts.)
 *
 * - A deletion: `conversation.deleted` and a DELETION audit entry.
 * - A change an integrator sees (`version` moved): `conversation.updated`, or for a snooze
 *   `conversation.snoozed` with its reason, a SNOOZE audit entry and the realtime snooze notice; an
 *   operator or team change adds an ASSIGNMENT audit entry and `conversation.assigned` (a newly named
 *   operator must exist: 422 `operatorId`); a move to `closed` adds `conversation.closed`.
 * - Whatever moved it: each team's count of open conversations follows `teamId`, the status and the
 *   deletion (team-load.ts; a newly named team must exist: 422 `teamId`).
 *
 * A change that moves neither `version` nor any of these (a read flag, an edit's preview) implies
 * nothing.
 */

/** What the request knows that the states do not say. */
export interface ChangeFacts {
  /** Who made the change: the audit entries it implies (assignment, snooze, deletion) name them. */
  actor?: Actor | undefined;
  /** The reason a snooze request gives (null: none). Only a snooze request has one. */
  snoozeReason?: string | null | undefined;
}

/**
 * What one conversation's change implies; a transaction of several changes shares the team counts.
 * The day counters (created, closed, CSAT) are not here: they follow the same states from the
 * table's stream (stats-stream.ts), off the request's transaction.
 */
export interface Implications {
  /** Actions of this change's own: events, audit entries, realtime notices, reference checks. */
  actions: Write[];
  /**
   * Operators the change newly names, who must exist (422 `operatorId`): read before the
   * transaction (`verifyOperators`), not checked on their items inside it, where every assignment
   * to one busy operator would queue on that one item.
   */
  operators: string[];
  /** The states the teams' open counts follow: a transaction moves each team's count once. */
  load: { before: StoredConversation; after: StoredConversation };
}

export function implicationsOf(
  before: StoredConversation,
  after: StoredConversation,
  facts: ChangeFacts = {},
): Implications {
  const implied: Implications = { actions: [], operators: [], load: { before, after } };
  if (after.deletedAt && !before.deletedAt) deletion(implied, after, facts);
  else if (after.version !== before.version) resourceChange(implied, before, after, facts);
  return implied;
}

/** The actions a transaction of these changes carries besides the conversations' own Updates. */
export function impliedWrites(orgId: string, implications: readonly Implications[]): Write[] {
  return [...implications.flatMap((implied) => implied.actions), ...sharedWrites(orgId, implications)];
}

/**
 * Refuses changes that name an operator the organization does not have (422 `operatorId`), with one
 * strongly consistent read of those not `verified` yet (which it adds to). Operators are never
 * deleted, so one found here still exists when the change commits.
 */
export async function verifyOperators(
  orgId: string,
  implications: readonly Implications[],
  verified: Set<string> = new Set(),
): Promise<void> {
  const named = implications.flatMap((implied) => implied.operators).filter((id) => !verified.has(id));
  if (named.length === 0) return;
  const missing = await operators.missing(orgId, named);
  if (missing.size) throw ValidationError.field('operatorId', 'No such operator in this organization');
  for (const id of named) verified.add(id);
}

/** The part of `impliedWrites` that changes share: one action per team whose open count moves. */
export function sharedWrites(orgId: string, implications: readonly Implications[]): Write[] {
  return teamLoadWrites(
    orgId,
    implications.map((implied) => implied.load),
  );
}

function deletion(implied: Implications, after: StoredConversation, facts: ChangeFacts): void {
  const orgId = after.organizationId;
  implied.actions.push(
    eventWrite(orgId, 'conversation.deleted', {
      id: after.id,
      deletedAt: after.deletedAt,
      version: after.version,
    }),
    auditWrite(orgId, after.id, 'DELETION', {
      type: 'conversation.deleted',
      actor: actorOf(facts, 'A deletion'),
    }),
  );
}

function resourceChange(
  implied: Implications,
  before: StoredConversation,
  after: StoredConversation,
  facts: ChangeFacts,
): void {
  const orgId = after.organizationId;
  const api = toConversation(after);
  if (isSnooze(before, after, facts)) implied.actions.push(...snoozeWrites(after, api, facts));
  else implied.actions.push(eventWrite(orgId, 'conversation.updated', api));
  if (after.operatorId && after.operatorId !== before.operatorId) implied.operators.push(after.operatorId);
  if (after.operatorId !== before.operatorId || after.teamId !== before.teamId) {
    const actor = actorOf(facts, 'An assignment');
    const entry = assignmentEntry(before.operatorId, after.operatorId, after.teamId, actor, before.teamId);
    if (entry)
      implied.actions.push(
        auditWrite(orgId, after.id, 'ASSIGNMENT', entry),
        eventWrite(orgId, 'conversation.assigned', api),
      );
  }
  if (after.status === 'closed' && before.status !== 'closed') {
    implied.actions.push(eventWrite(orgId, 'conversation.closed', api));
  }
}

/**
 * A move into a snooze or to another snooze time; a snooze request (it gives its reason, if only
 * null) is one even when it repeats the time, and the history records it again.
 */
function isSnooze(before: StoredConversation, after: StoredConversation, facts: ChangeFacts): boolean {
  return (
    after.status === 'snoozed' &&
    (facts.snoozeReason !== undefined ||
      before.status !== 'snoozed' ||
      before.snoozedUntil !== after.snoozedUntil)
  );
}

/** `conversation.snoozed` (instead of `conversation.updated`), the SNOOZE entry and the operators' notice. */
function snoozeWrites(after: StoredConversation, api: Conversation, facts: ChangeFacts): Write[] {
  const orgId = after.organizationId;
  const reason = facts.snoozeReason ?? null;
  const actor = actorOf(facts, 'A snooze');
  return [
    eventWrite(orgId, 'conversation.snoozed', { ...api, snoozeReason: reason }),
    auditWrite(orgId, after.id, 'SNOOZE', { type: 'snoozed', until: after.snoozedUntil, reason, actor }),
    realtimeWrite(orgId, {
      type: 'conversation_snoozed',
      audience: 'operators',
      conversationId: after.id,
      payload: { conversationId: after.id, snoozedUntil: after.snoozedUntil, reason, actor },
    }),
  ];
}

/** The actor an audit entry names; a writer that implies one without saying who acted is a bug. */
function actorOf(facts: ChangeFacts, what: string): Actor {
  if (!facts.actor) throw new Error(`${what} is recorded with who made it: the change needs its actor`);
  return facts.actor;
}
