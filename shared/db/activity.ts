import type { DayTotals } from '../analytics/counters';
import {
  type ActivityFact,
  answeredIn,
  type ConversationFacts,
  conversationFactAttributes,
  conversationFactsOf,
  countedEventTypes,
  factOf,
  type ResponseFact,
  tally,
} from '../analytics/tally';
import { COMMIT_WINDOW_MS, DAY_MS, type Span } from '../analytics/window';
import { batchGet } from './batch';
import { tableName } from './client';
import { EVENT_RETENTION_MS, eventDataOf } from './events';
import { keys } from './keys';
import { queryAll } from './query';

/**
 * The organization's activity within part of a day, counted item by item, for the analytics export
 * (the day counters hold whole days only). Conversations created and closed and messages come from
 * the domain events every such change writes in its own transaction; first responses from the state
 * of the conversations answered in the span; survey responses from their by-time index (gsi1),
 * checked against their conversation (deleted, or another response active: not counted). See
 * docs/data-model.md, "Daily aggregates".
 */

/**
 * How far back a span may start: the events expire 35 days after they are written (and DynamoDB
 * deletes expired items at its own pace), so a span is counted only while all of its events are
 * surely there, with a day to spare for the day a bound falls in.
 */
export const PART_DAY_HORIZON_MS = EVENT_RETENTION_MS - 2 * DAY_MS;

/**
 * Events of a span are read in Queries of an hour of one shard partition each (keys.event), all sent
 * together: an hour of a busy organization's events fits in one 1 MB page, so a part-day costs one
 * round trip, not a page after a page (a Query rounds its size up once, so the split costs at most
 * half a unit per hour and shard).
 */
const SEGMENT_MS = 3_600_000;

/** The figures of each span (each within one UTC day and `PART_DAY_HORIZON_MS`), in order. */
export async function countSpans(orgId: string, spans: readonly Span[]): Promise<DayTotals[]> {
  if (spans.length === 0) return [];
  const [facts, responses] = await Promise.all([
    Promise.all(spans.map((span) => factsAround(orgId, span))),
    Promise.all(spans.map((span) => responsesIn(orgId, span))),
  ]);
  const wanted = new Set<string>();
  spans.forEach((span, i) => {
    for (const id of answeredIn(span, facts[i] ?? [])) wanted.add(id);
    for (const response of responses[i] ?? []) wanted.add(response.conversationId);
  });
  const conversations = await conversationFacts(orgId, [...wanted]);
  return spans.map((span, i) => tally(span, facts[i] ?? [], responses[i] ?? [], conversations));
}

/**
 * The counted events whose ids fall within the span widened by the commit window on each side: an
 * event's id is minted a moment after the instant its resource records (in the same call), so the
 * widened range holds every event whose resource time lies in the span; `tally` keeps those.
 */
async function factsAround(orgId: string, span: Span): Promise<ActivityFact[]> {
  const from = span.from - COMMIT_WINDOW_MS;
  const to = span.to + COMMIT_WINDOW_MS;
  const segments: Span[] = [];
  for (let start = from; start < to; start += SEGMENT_MS)
    segments.push({ from: start, to: Math.min(start + SEGMENT_MS, to) });
  const types = Object.fromEntries(countedEventTypes.map((type, i) => [`:t${i}`, type]));
  // Each event lies in exactly one shard, so the shards' counts add up without overlap.
  const reads = segments.flatMap((segment) => keys.eventsPartitions(orgId).map((pk) => ({ segment, pk })));
  const pages = await Promise.all(
    reads.map(async ({ segment, pk }) => {
      const items = await queryAll({
        TableName: tableName,
        // The key just below the first id of each bound's millisecond: ids in [from, to).
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        FilterExpression: `#type IN (${Object.keys(types).join(', ')})`,
        ProjectionExpression: '#type, dataZ, #data',
        ExpressionAttributeNames: { '#type': 'type', '#data': 'data' },
        ExpressionAttributeValues: {
          ':pk': pk,
          ':from': keys.eventKeyAt(segment.from),
          ':to': keys.eventKeyAt(segment.to),
          ...types,
        },
      });
      return items.flatMap((item) => factOf(item.type, eventDataOf(item)) ?? []);
    }),
  );
  return pages.flat();
}

/**
 * Active responses given in the span, from the by-time index: its sort key begins with the ISO
 * instant, so BETWEEN the two bounds' instants holds exactly [from, to) (a key at `to` continues
 * past `to` itself).
 */
async function responsesIn(orgId: string, span: Span): Promise<ResponseFact[]> {
  const partition = keys.surveysByTimePartition(orgId);
  const items = await queryAll({
    TableName: tableName,
    IndexName: partition.index,
    KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk BETWEEN :from AND :to',
    ExpressionAttributeValues: {
      ':pk': partition.pk,
      ':from': new Date(span.from).toISOString(),
      ':to': new Date(span.to).toISOString(),
    },
  });
  return items.flatMap((item) => {
    const entry = typeof item.gsi1sk === 'string' ? keys.surveyByTimeOf(item.gsi1sk) : undefined;
    const at = entry ? Date.parse(entry.createdAt) : Number.NaN;
    return entry && !Number.isNaN(at)
      ? [{ at, conversationId: entry.conversationId, surveyId: entry.surveyId }]
      : [];
  });
}

/** The few attributes the count needs of each conversation (deleted ones included), eventually consistent. */
async function conversationFacts(
  orgId: string,
  conversationIds: readonly string[],
): Promise<Map<string, ConversationFacts>> {
  const found = new Map<string, ConversationFacts>();
  if (conversationIds.length === 0) return found;
  const items = await batchGet(
    conversationIds.map((id) => keys.conversation(orgId, id)),
    { consistent: false, projection: ['id', ...conversationFactAttributes] },
  );
  for (const item of items) found.set(String(item.id), conversationFactsOf(item));
  return found;
}
