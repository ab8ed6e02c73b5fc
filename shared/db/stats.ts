import { type DayTotals, emptyTotals, FRT_BUCKETS, frtBucketOf } from '../analytics/counters';
import { dayOf } from '../analytics/days';
import type { ActiveSurvey, StoredConversation } from '../conversations/state';
import type { Increment } from './increments';
import { keys } from './keys';
import { readDayRange } from './query';
import { shardOf as shardOfValue } from './shards';

/**
 * The organization's daily aggregates: what moves them (increments counted from the table's stream,
 * stats-stream.ts) and how they are read back (one Query per counter family over a day range, shards
 * summed in memory). See docs/data-model.md, "Daily aggregates".
 */

/**
 * How many items hold one day's organization counters. The stream's consumers of different shards
 * count at once, and two transactions on one item at once cancel each other (TransactionConflict):
 * spread over 8 items, they meet 8 times less often, while a 90-day read stays under 1 MB (≤ 720
 * items of ~0.5 KB).
 */
export const STATS_SHARDS = 8;

/** The same conversation always lands on the same shard. */
export const shardOf = (conversationId: string): number => shardOfValue(conversationId, STATS_SHARDS);

/** Attribute names of a shard item (short: the item is rewritten by most messages, in 1 KB units). */
const attr = {
  created: 'created',
  closed: 'closed',
  visitorMessages: 'msgVisitor',
  operatorMessages: 'msgOperator',
  firstResponses: 'frtCount',
  firstResponseMsSum: 'frtSumMs',
  csatResponses: 'csatCount',
  csatScoreSum: 'csatSum',
} as const;
const bucketAttr = (bucket: number) => `frt${String(bucket).padStart(2, '0')}`;
const scoreAttr = (score: number) => `csat${score}`;

/** Increments of one day's organization counters, on the shard of `conversationId`. */
function dayCounters(
  orgId: string,
  day: string,
  conversationId: string,
  add: Record<string, number>,
): Increment {
  return {
    key: keys.statsShard(orgId, day, shardOf(conversationId)),
    add,
    fields: { entity: 'stats', day },
    group: `${orgId}#DAY#${day}`,
  };
}

function operatorCounters(
  orgId: string,
  day: string,
  operatorId: string,
  add: Record<string, number>,
): Increment {
  return {
    key: keys.statsOperatorDay(orgId, day, operatorId),
    add,
    fields: { entity: 'stats', day, operatorId },
  };
}

/** What a first response adds: one more, its time, its histogram bucket. */
function firstResponseCounters(firstResponseTimeMs: number): Record<string, number> {
  return {
    [attr.firstResponses]: 1,
    [attr.firstResponseMsSum]: firstResponseTimeMs,
    [bucketAttr(frtBucketOf(firstResponseTimeMs))]: 1,
  };
}

export const stats = {
  /** A new conversation, counted on its creation day (its first message is counted as a message). */
  conversationStarted(conversation: StoredConversation): Increment[] {
    return [
      dayCounters(conversation.organizationId, dayOf(conversation.createdAt), conversation.id, {
        [attr.created]: 1,
      }),
    ];
  },

  /** A message of a visitor or an operator, on the day it was sent. */
  messagesCounted(
    orgId: string,
    day: string,
    conversationId: string,
    senderType: 'visitor' | 'operator',
  ): Increment[] {
    const name = senderType === 'visitor' ? attr.visitorMessages : attr.operatorMessages;
    return [dayCounters(orgId, day, conversationId, { [name]: 1 })];
  },

  /** The first response of a conversation, given at `respondedAt`, counted on its day. */
  firstResponse(
    conversation: StoredConversation,
    respondedAt: string,
    firstResponseTimeMs: number,
  ): Increment[] {
    return [
      dayCounters(
        conversation.organizationId,
        dayOf(respondedAt),
        conversation.id,
        firstResponseCounters(firstResponseTimeMs),
      ),
    ];
  },

  /** A move to `closed`, on the day of the change. */
  conversationClosed(after: StoredConversation): Increment[] {
    return [dayCounters(after.organizationId, dayOf(after.updatedAt), after.id, { [attr.closed]: 1 })];
  },

  /**
   * A survey response counted (`sign` 1: created) or no longer counted (−1: deactivated, or its
   * conversation deleted), always on the response's own day and operator.
   */
  surveyCounted(orgId: string, conversationId: string, survey: ActiveSurvey, sign: 1 | -1): Increment[] {
    const increments = [
      dayCounters(orgId, survey.day, conversationId, {
        [attr.csatResponses]: sign,
        [attr.csatScoreSum]: sign * survey.score,
        [scoreAttr(survey.score)]: sign,
      }),
    ];
    if (survey.operatorId)
      increments.push(
        operatorCounters(orgId, survey.day, survey.operatorId, {
          [attr.csatResponses]: sign,
          [attr.csatScoreSum]: sign * survey.score,
        }),
      );
    return increments;
  },

  /** The organization's totals per day from `from` to `to` (both included): shards summed. */
  async days(orgId: string, from: string, to: string): Promise<Map<string, DayTotals>> {
    const items = await readRange(orgId, keys.statsDayPrefix, from, to);
    const byDay = new Map<string, DayTotals>();
    for (const item of items) {
      const day = String(item.day);
      let totals = byDay.get(day);
      if (!totals) {
        totals = emptyTotals();
        byDay.set(day, totals);
      }
      addItem(totals, item);
    }
    return byDay;
  },

  /** Per operator, the CSAT responses and score sum of the days from `from` to `to`. */
  async operators(
    orgId: string,
    from: string,
    to: string,
  ): Promise<Map<string, { responses: number; scoreSum: number }>> {
    const items = await readRange(orgId, keys.statsOperatorDayPrefix, from, to);
    const byOperator = new Map<string, { responses: number; scoreSum: number }>();
    for (const item of items) {
      const operatorId = String(item.operatorId);
      const totals = byOperator.get(operatorId) ?? { responses: 0, scoreSum: 0 };
      totals.responses += numberOf(item[attr.csatResponses]);
      totals.scoreSum += numberOf(item[attr.csatScoreSum]);
      byOperator.set(operatorId, totals);
    }
    return byOperator;
  },
};

const numberOf = (value: unknown): number => (typeof value === 'number' ? value : 0);

/** Adds one shard item's counters (absent attributes are zero). */
function addItem(totals: DayTotals, item: Record<string, unknown>): void {
  totals.conversationsCreated += numberOf(item[attr.created]);
  totals.conversationsClosed += numberOf(item[attr.closed]);
  totals.visitorMessages += numberOf(item[attr.visitorMessages]);
  totals.operatorMessages += numberOf(item[attr.operatorMessages]);
  totals.firstResponses += numberOf(item[attr.firstResponses]);
  totals.firstResponseMsSum += numberOf(item[attr.firstResponseMsSum]);
  for (let bucket = 0; bucket < FRT_BUCKETS; bucket++)
    totals.firstResponseBuckets[bucket] =
      (totals.firstResponseBuckets[bucket] ?? 0) + numberOf(item[bucketAttr(bucket)]);
  totals.csatResponses += numberOf(item[attr.csatResponses]);
  totals.csatScoreSum += numberOf(item[attr.csatScoreSum]);
  for (let score = 1; score <= 5; score++)
    totals.csatScores[score - 1] = (totals.csatScores[score - 1] ?? 0) + numberOf(item[scoreAttr(score)]);
}

const readRange = (orgId: string, prefix: string, from: string, to: string) =>
  readDayRange(keys.statsPartition(orgId), prefix, from, to);
