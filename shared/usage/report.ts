import { addDays, daysBetween } from '../analytics/days';
import { ValidationError } from '../errors';
import { addUsage, emptyUsage, rounded, type Usage } from './usage';

/**
 * The usage answer: the window asked for, cut into days or UTC months, each period's figures and
 * the window's totals. Pure: the counts come from shared/db/usage.ts `readUsage`.
 */

/** At most this many days from `from` to `to` (the analytics export's longest window too). */
export const MAX_USAGE_DAYS = 366;
/** Without `from`, the window is this many days ending today (`to` is tomorrow). */
export const DEFAULT_USAGE_DAYS = 30;

export type Granularity = 'day' | 'month';

/** `from` (included) and `to` (excluded), UTC dates. */
export interface UsageWindow {
  from: string;
  to: string;
}

const DAY_MS = 86_400_000;
const daysApart = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / DAY_MS;

/** The window of a query (dates already well-formed), by default the 30 days that end today. */
export function usageWindow(
  query: { from?: string | undefined; to?: string | undefined },
  today: string,
): UsageWindow {
  const to = query.to ?? addDays(today, 1);
  const from = query.from ?? addDays(to, -DEFAULT_USAGE_DAYS);
  if (from >= to)
    throw ValidationError.field(
      'from',
      `from (${from}) must be before to (${to}${query.to === undefined ? ', tomorrow: the default' : ''}); to is excluded`,
    );
  if (daysApart(from, to) > MAX_USAGE_DAYS)
    throw ValidationError.field(
      query.from === undefined ? 'to' : 'from',
      `A usage window covers at most ${MAX_USAGE_DAYS} days`,
    );
  return { from, to };
}

/** The periods of the window: each day, or each UTC month cut to the window; oldest first. */
export function periodsOf(
  window: UsageWindow,
  granularity: Granularity,
): { period: string; days: string[] }[] {
  const days = daysBetween(window.from, addDays(window.to, -1));
  if (granularity === 'day') return days.map((day) => ({ period: day, days: [day] }));
  const months: { period: string; days: string[] }[] = [];
  for (const day of days) {
    const month = day.slice(0, 7);
    const last = months.at(-1);
    if (last?.period === month) last.days.push(day);
    else months.push({ period: month, days: [day] });
  }
  return months;
}

/** The bytes stored at the end of each day of `days` (ascending): the running sum of every change up to it. */
function storedAtEnds(days: readonly string[], deltas: ReadonlyMap<string, number>): Map<string, number> {
  const changes = [...deltas.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const stored = new Map<string, number>();
  let sum = 0;
  let next = 0;
  for (const day of days) {
    while (next < changes.length && (changes[next]?.[0] ?? '') <= day) sum += changes[next++]?.[1] ?? 0;
    stored.set(day, sum);
  }
  return stored;
}

export interface UsageReport {
  from: string;
  to: string;
  granularity: Granularity;
  data: ({ period: string } & Usage)[];
  totals: Usage;
}

/** Each period's usage (counters summed over its days, stored bytes at its last day's end) and the totals. */
export function usageReport(
  window: UsageWindow,
  granularity: Granularity,
  counters: ReadonlyMap<string, Usage>,
  storedDeltas: ReadonlyMap<string, number>,
): UsageReport {
  const periods = periodsOf(window, granularity);
  const allDays = periods.flatMap((period) => period.days);
  const stored = storedAtEnds(allDays, storedDeltas);
  const totals = emptyUsage();
  const data = periods.map(({ period, days }) => {
    const usage = emptyUsage();
    for (const day of days) {
      const counted = counters.get(day);
      if (counted) addUsage(usage, counted);
    }
    usage.storedBytes = stored.get(days.at(-1) ?? '') ?? 0;
    addUsage(totals, usage);
    return { period, ...rounded(usage) };
  });
  totals.storedBytes = stored.get(allDays.at(-1) ?? '') ?? 0;
  return { from: window.from, to: window.to, granularity, data, totals: rounded(totals) };
}
