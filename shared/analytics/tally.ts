import { type DayTotals, emptyTotals, frtBucketOf } from './counters';
import type { Span } from './window';

/**
 * Part of a day counted item by item, exactly as the day counters count it (shared/db/stats.ts):
 * the same changes, filed under the same instants. Pure: shared/db/activity.ts reads the items.
 */

/**
 * What a stored domain event adds, at the instant the counters file it under: a conversation's
 * `createdAt`, the `updatedAt` of a move to `closed`, a message's `createdAt`.
 */
export type ActivityFact =
  | { kind: 'created'; at: number }
  | { kind: 'closed'; at: number }
  | { kind: 'message'; at: number; senderType: string; conversationId: string };

/** The event types the counters move with (every counted change writes one of them beside its increment). */
export const countedEventTypes = ['conversation.created', 'conversation.closed', 'message.created'] as const;

const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};

function instant(value: unknown): number | undefined {
  const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isNaN(ms) ? undefined : ms;
}

/** The fact an event of `type` with `data` (the resource as written) records; undefined for others. */
export function factOf(type: unknown, data: unknown): ActivityFact | undefined {
  const resource = record(data);
  if (type === 'conversation.created') {
    const at = instant(resource.createdAt);
    return at === undefined ? undefined : { kind: 'created', at };
  }
  if (type === 'conversation.closed') {
    const at = instant(resource.updatedAt);
    return at === undefined ? undefined : { kind: 'closed', at };
  }
  if (type === 'message.created') {
    const at = instant(resource.createdAt);
    const { senderType, conversationId } = resource;
    if (at === undefined || typeof senderType !== 'string' || typeof conversationId !== 'string')
      return undefined;
    return { kind: 'message', at, senderType, conversationId };
  }
  return undefined;
}

/** A survey response from the organization's by-time index: when it was given, and whose it is. */
export interface ResponseFact {
  at: number;
  conversationId: string;
  surveyId: string;
}

/** What the count needs of a conversation's stored state. */
export interface ConversationFacts {
  deleted: boolean;
  firstVisitorMessageAt: string | null;
  firstResponseTimeMs: number | null;
  /** The response that counts in CSAT (the conversation's `activeSurvey`). */
  activeSurvey: { surveyId: string; score: number } | null;
}

/** The stored conversation's attributes `conversationFactsOf` reads. */
export const conversationFactAttributes = [
  'deletedAt',
  'firstVisitorMessageAt',
  'firstResponseTimeMs',
  'activeSurvey',
] as const;

/** The facts of a stored conversation item (absent or malformed attributes read as none). */
export function conversationFactsOf(item: Record<string, unknown>): ConversationFacts {
  const survey = record(item.activeSurvey);
  return {
    deleted: typeof item.deletedAt === 'string',
    firstVisitorMessageAt: typeof item.firstVisitorMessageAt === 'string' ? item.firstVisitorMessageAt : null,
    firstResponseTimeMs: typeof item.firstResponseTimeMs === 'number' ? item.firstResponseTimeMs : null,
    activeSurvey:
      typeof survey.surveyId === 'string' && typeof survey.score === 'number'
        ? { surveyId: survey.surveyId, score: survey.score }
        : null,
  };
}

/**
 * The instant of the conversation's first response: the operator message that set
 * `firstResponseTimeMs` came that long after the first visitor message (shared/conversations/state.ts,
 * `withMessage`), and the counters file it under that message's `createdAt`.
 */
export function firstResponseAt(conversation: ConversationFacts): number | null {
  if (conversation.firstResponseTimeMs === null || conversation.firstVisitorMessageAt === null) return null;
  const since = Date.parse(conversation.firstVisitorMessageAt);
  return Number.isNaN(since) ? null : since + conversation.firstResponseTimeMs;
}

const within = (span: Span, at: number) => at >= span.from && at < span.to;

/**
 * Conversations with an operator message in `span`: the only ones whose first response can lie in
 * it, as a first response is an operator message.
 */
export function answeredIn(span: Span, facts: readonly ActivityFact[]): Set<string> {
  const ids = new Set<string>();
  for (const fact of facts)
    if (fact.kind === 'message' && fact.senderType === 'operator' && within(span, fact.at))
      ids.add(fact.conversationId);
  return ids;
}

/**
 * The figures of `span`: the facts and responses in it (the reads may return some around it), first
 * responses of the conversations answered in it, and the responses that still count (their
 * conversation not deleted, and the response the one it holds as active).
 */
export function tally(
  span: Span,
  facts: readonly ActivityFact[],
  responses: readonly ResponseFact[],
  conversations: ReadonlyMap<string, ConversationFacts>,
): DayTotals {
  const totals = emptyTotals();
  for (const fact of facts) {
    if (!within(span, fact.at)) continue;
    if (fact.kind === 'created') totals.conversationsCreated++;
    else if (fact.kind === 'closed') totals.conversationsClosed++;
    else if (fact.senderType === 'visitor') totals.visitorMessages++;
    else if (fact.senderType === 'operator') totals.operatorMessages++;
  }
  for (const conversationId of answeredIn(span, facts)) {
    const conversation = conversations.get(conversationId);
    const at = conversation ? firstResponseAt(conversation) : null;
    const ms = conversation?.firstResponseTimeMs;
    if (at === null || ms === undefined || ms === null || !within(span, at)) continue;
    totals.firstResponses++;
    totals.firstResponseMsSum += ms;
    const bucket = frtBucketOf(ms);
    totals.firstResponseBuckets[bucket] = (totals.firstResponseBuckets[bucket] ?? 0) + 1;
  }
  for (const response of responses) {
    if (!within(span, response.at)) continue;
    const conversation = conversations.get(response.conversationId);
    const active = conversation && !conversation.deleted ? conversation.activeSurvey : null;
    if (active?.surveyId !== response.surveyId) continue;
    const score = active.score;
    if (!Number.isInteger(score) || score < 1 || score > 5) continue;
    totals.csatResponses++;
    totals.csatScoreSum += score;
    totals.csatScores[score - 1] = (totals.csatScores[score - 1] ?? 0) + 1;
  }
  return totals;
}
