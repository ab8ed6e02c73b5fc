/**
 * What the daily aggregates count, and the arithmetic on them. Pure: the storage of the counters
 * (shared/db/stats.ts) turns items into `DayTotals`, the endpoints turn totals into figures.
 */

/**
 * Upper bounds (ms, inclusive) of the first-response-time histogram: bucket i holds the times above
 * bucket i − 1's bound and at most its own; the last bucket (index `FRT_BUCKET_BOUNDS_MS.length`)
 * holds everything above 48 h. Fixed forever: changing a bound would mix two histograms in stored days.
 */
export const FRT_BUCKET_BOUNDS_MS = [
  30_000, // 30 s
  60_000, // 1 min
  120_000, // 2 min
  300_000, // 5 min
  600_000, // 10 min
  900_000, // 15 min
  1_800_000, // 30 min
  3_600_000, // 1 h
  7_200_000, // 2 h
  14_400_000, // 4 h
  28_800_000, // 8 h
  86_400_000, // 24 h
  172_800_000, // 48 h
] as const;

export const FRT_BUCKETS = FRT_BUCKET_BOUNDS_MS.length + 1;

/** The histogram bucket of a first response time. */
export function frtBucketOf(ms: number): number {
  const index = FRT_BUCKET_BOUNDS_MS.findIndex((bound) => ms <= bound);
  return index === -1 ? FRT_BUCKET_BOUNDS_MS.length : index;
}

/** One day's figures (or the sum of several days): every counter the aggregates keep. */
export interface DayTotals {
  conversationsCreated: number;
  /** Moves to `closed` (PATCH, bulk close); a conversation closed twice counts twice. */
  conversationsClosed: number;
  visitorMessages: number;
  operatorMessages: number;
  /** Conversations whose first operator answer to a visitor came that day. */
  firstResponses: number;
  firstResponseMsSum: number;
  /** `FRT_BUCKETS` counts, see `FRT_BUCKET_BOUNDS_MS`. */
  firstResponseBuckets: number[];
  csatResponses: number;
  csatScoreSum: number;
  /** Responses with score 1..5, at index score − 1. */
  csatScores: number[];
}

export function emptyTotals(): DayTotals {
  return {
    conversationsCreated: 0,
    conversationsClosed: 0,
    visitorMessages: 0,
    operatorMessages: 0,
    firstResponses: 0,
    firstResponseMsSum: 0,
    firstResponseBuckets: new Array<number>(FRT_BUCKETS).fill(0),
    csatResponses: 0,
    csatScoreSum: 0,
    csatScores: [0, 0, 0, 0, 0],
  };
}

const addArrays = (into: number[], from: readonly number[]) => {
  from.forEach((value, i) => {
    into[i] = (into[i] ?? 0) + value;
  });
};

/** Adds `from` into `into` (sums of shards, of days). */
export function addInto(into: DayTotals, from: DayTotals): DayTotals {
  into.conversationsCreated += from.conversationsCreated;
  into.conversationsClosed += from.conversationsClosed;
  into.visitorMessages += from.visitorMessages;
  into.operatorMessages += from.operatorMessages;
  into.firstResponses += from.firstResponses;
  into.firstResponseMsSum += from.firstResponseMsSum;
  addArrays(into.firstResponseBuckets, from.firstResponseBuckets);
  into.csatResponses += from.csatResponses;
  into.csatScoreSum += from.csatScoreSum;
  addArrays(into.csatScores, from.csatScores);
  return into;
}

/**
 * `whole` without `part`: what a day's counters hold beyond the items counted in part of that day.
 * Exact when `part` counts a subset of what `whole` counted, as the same writes move both.
 */
export function totalsLess(whole: DayTotals, part: DayTotals): DayTotals {
  const less = (a: readonly number[], b: readonly number[]) => a.map((value, i) => value - (b[i] ?? 0));
  return {
    conversationsCreated: whole.conversationsCreated - part.conversationsCreated,
    conversationsClosed: whole.conversationsClosed - part.conversationsClosed,
    visitorMessages: whole.visitorMessages - part.visitorMessages,
    operatorMessages: whole.operatorMessages - part.operatorMessages,
    firstResponses: whole.firstResponses - part.firstResponses,
    firstResponseMsSum: whole.firstResponseMsSum - part.firstResponseMsSum,
    firstResponseBuckets: less(whole.firstResponseBuckets, part.firstResponseBuckets),
    csatResponses: whole.csatResponses - part.csatResponses,
    csatScoreSum: whole.csatScoreSum - part.csatScoreSum,
    csatScores: less(whole.csatScores, part.csatScores),
  };
}

export function sumTotals(all: Iterable<DayTotals>): DayTotals {
  const total = emptyTotals();
  for (const totals of all) addInto(total, totals);
  return total;
}

/** Where the open last bucket starts: the largest bound. */
const OPEN_BUCKET_FLOOR_MS: number = FRT_BUCKET_BOUNDS_MS[12];

/**
 * The median first response time from the histogram: the upper bound of the bucket that holds the
 * middle response (the lower one of the two middles for an even count), so the true median is at
 * most this value and above the previous bound. In the open last bucket it is that bucket's lower
 * bound (48 h: the median is at least that). Null with no first response.
 */
export function medianFromBuckets(buckets: readonly number[]): number | null {
  const count = buckets.reduce((sum, value) => sum + value, 0);
  if (count <= 0) return null;
  const middle = Math.ceil(count / 2);
  let seen = 0;
  for (const [i, bound] of FRT_BUCKET_BOUNDS_MS.entries()) {
    seen += buckets[i] ?? 0;
    if (seen >= middle) return bound;
  }
  return OPEN_BUCKET_FLOOR_MS;
}

export const meanOf = (sum: number, count: number): number | null => (count > 0 ? sum / count : null);

/** Survey responses per conversation closed, as a fraction 0–1 (0 when nothing closed). */
export function responseRateOf(responses: number, closed: number): number {
  if (closed <= 0) return 0;
  return Math.min(1, responses / closed);
}
