import { ValidationError } from '../errors';
import { type DayTotals, emptyTotals, sumTotals, totalsLess } from './counters';
import { dayOf } from './days';

/**
 * The analytics export's window and how each UTC day of it is counted. Whole days come from the day
 * counters; a day the window covers only in part is counted from the items of that part, or, when
 * the day is over and the part left out is the shorter one, as the day's counters less the items
 * left out. Pure: the reads are shared/db/stats.ts (counters) and shared/db/activity.ts (items).
 */

export const DAY_MS = 86_400_000;

/** A period from `from` (included) to `to` (excluded), in epoch milliseconds. */
export interface Span {
  from: number;
  to: number;
}

/** Without `date_from`, the window is this many days before its end. */
export const DEFAULT_WINDOW_DAYS = 30;
/** The longest window: a year of day counters, read in one round trip. */
export const MAX_WINDOW_DAYS = 366;

/**
 * How long after the instant it records a write may still commit: API functions are stopped at
 * 29 s (API Gateway's integration timeout). A day ended longer ago than this has final counters.
 */
export const COMMIT_WINDOW_MS = 30_000;

const isMidnight = (ms: number) => ms % DAY_MS === 0;
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The window `date_from`..`date_to` (a date stands for its UTC midnight), by default the 30 days
 * ending at `nowMs`. Refused (422): an empty or reversed window, one over 366 days, and a bound with a
 * time of day older than `horizonMs`, as the items a part-day is counted from are kept that long.
 */
export function exportWindow(
  query: { date_from?: string | undefined; date_to?: string | undefined },
  nowMs: number,
  horizonMs: number,
): Span {
  const to = query.date_to === undefined ? nowMs : Date.parse(query.date_to);
  const from =
    query.date_from === undefined ? to - DEFAULT_WINDOW_DAYS * DAY_MS : Date.parse(query.date_from);
  if (from >= to)
    throw ValidationError.field(
      'date_from',
      `date_from (${iso(from)}) must be before date_to (${iso(to)}${query.date_to === undefined ? ', the request time' : ''}): the window ends at date_to, excluded`,
    );
  if (to - from > MAX_WINDOW_DAYS * DAY_MS)
    throw ValidationError.field('date_from', `An export covers at most ${MAX_WINDOW_DAYS} days`);
  const horizon = nowMs - horizonMs;
  const horizonDays = Math.floor(horizonMs / DAY_MS);
  const tooOld = (ms: number) => !isMidnight(ms) && ms < horizon;
  const refuse = (field: string, extra = '') =>
    ValidationError.field(
      field,
      `A bound more than ${horizonDays} days back must be a UTC midnight (a date): within a day, figures are counted item by item from the organization's event log, which is not kept much longer${extra}`,
    );
  if (tooOld(to)) throw refuse('date_to');
  if (tooOld(from))
    throw query.date_from === undefined
      ? refuse('date_to', `; date_from defaults to date_to − ${DEFAULT_WINDOW_DAYS} days: give it as a date`)
      : refuse('date_from');
  return { from, to };
}

/** One UTC day of the window: the part of it the window covers, and how that part is counted. */
export type DayPlan = { day: string; span: Span } & (
  | { count: 'counters' }
  | { count: 'items'; read: Span[] }
  | { count: 'counters-less-items'; read: Span[] }
);

/**
 * Every UTC day the window touches, oldest first, each cut to the window. A whole day is its
 * counters. A part-day is counted from its items, directly, or as the day's counters less the items
 * of the part left out when that part is shorter (less to read) and the day is over: a day still
 * open may gain writes between the counters' read and the items' read, and only subtracting would
 * then count them wrongly.
 */
export function planDays(window: Span, nowMs: number): DayPlan[] {
  const plans: DayPlan[] = [];
  for (let start = Math.floor(window.from / DAY_MS) * DAY_MS; start < window.to; start += DAY_MS) {
    const end = start + DAY_MS;
    const span = { from: Math.max(window.from, start), to: Math.min(window.to, end) };
    const day = dayOf(iso(start));
    if (span.from === start && span.to === end) {
      plans.push({ day, span, count: 'counters' });
      continue;
    }
    const covered = span.to - span.from;
    const settled = end + COMMIT_WINDOW_MS <= nowMs;
    if (settled && DAY_MS - covered < covered) {
      const read = [
        { from: start, to: span.from },
        { from: span.to, to: end },
      ].filter((part) => part.to > part.from);
      plans.push({ day, span, count: 'counters-less-items', read });
    } else plans.push({ day, span, count: 'items', read: [span] });
  }
  return plans;
}

/** The spans the plans count from items, in plan order: what `dayFigures` takes the counts of. */
export const spansToCount = (plans: readonly DayPlan[]): Span[] =>
  plans.flatMap((plan) => (plan.count === 'counters' ? [] : plan.read));

/**
 * Each day's figures for its part of the window, from the day counters and the counts of
 * `spansToCount(plans)` (same order).
 */
export function dayFigures(
  plans: readonly DayPlan[],
  counters: ReadonlyMap<string, DayTotals>,
  counted: readonly DayTotals[],
): { day: string; span: Span; totals: DayTotals }[] {
  let next = 0;
  const take = (count: number) => {
    const parts = counted.slice(next, next + count);
    if (parts.length !== count) throw new Error('fewer counts than spans to count');
    next += count;
    return sumTotals(parts);
  };
  return plans.map((plan) => {
    const whole = counters.get(plan.day) ?? emptyTotals();
    const totals =
      plan.count === 'counters'
        ? whole
        : plan.count === 'items'
          ? take(plan.read.length)
          : totalsLess(whole, take(plan.read.length));
    return { day: plan.day, span: plan.span, totals };
  });
}
