/**
 * What an organization did, as its usage counts it (the contract, "Usage per organization"), and
 * the arithmetic on it. Pure: where each count comes from is shared/db/usage-stream.ts (what the
 * table's stream shows) and shared/usage/request-meter.ts (what each function instance answered);
 * where the counts are kept is shared/db/usage.ts.
 */

export interface Usage {
  conversationsCreated: number;
  messages: number;
  visitorMessages: number;
  notes: number;
  events: number;
  webhookDeliveries: { attempted: number; succeeded: number; failed: number };
  exports: { count: number; rows: number };
  transcripts: number;
  uploads: { count: number; bytes: number };
  storedBytes: number;
  searchQueries: number;
  apiRequests: { total: number; clientErrors: number; rateLimited: number; serverErrors: number };
  capacityUnits: { read: number; write: number };
}

/**
 * Every counter the usage items keep, by the short attribute name it has there (an item is
 * rewritten by every flush and count, in 1 KB units), with where it sits in `Usage`. `storedBytes`
 * is no counter: it is the running sum of `storedDelta` up to a period's end.
 */
export const USAGE_COUNTERS = {
  conv: ['conversationsCreated'],
  msg: ['messages'],
  msgV: ['visitorMessages'],
  notes: ['notes'],
  events: ['events'],
  whA: ['webhookDeliveries', 'attempted'],
  whS: ['webhookDeliveries', 'succeeded'],
  whF: ['webhookDeliveries', 'failed'],
  exp: ['exports', 'count'],
  expRows: ['exports', 'rows'],
  tr: ['transcripts'],
  upl: ['uploads', 'count'],
  uplB: ['uploads', 'bytes'],
  srch: ['searchQueries'],
  req: ['apiRequests', 'total'],
  req4: ['apiRequests', 'clientErrors'],
  req429: ['apiRequests', 'rateLimited'],
  req5: ['apiRequests', 'serverErrors'],
  rcu: ['capacityUnits', 'read'],
  wcu: ['capacityUnits', 'write'],
} as const satisfies Record<string, readonly [keyof Usage] | readonly [keyof Usage, string]>;

export type UsageCounter = keyof typeof USAGE_COUNTERS;

/** The attribute of an upload's bytes added (+) or removed (−) on a day: storedBytes is their running sum. */
export const STORED_DELTA = 'storedDelta';

export function emptyUsage(): Usage {
  return {
    conversationsCreated: 0,
    messages: 0,
    visitorMessages: 0,
    notes: 0,
    events: 0,
    webhookDeliveries: { attempted: 0, succeeded: 0, failed: 0 },
    exports: { count: 0, rows: 0 },
    transcripts: 0,
    uploads: { count: 0, bytes: 0 },
    storedBytes: 0,
    searchQueries: 0,
    apiRequests: { total: 0, clientErrors: 0, rateLimited: 0, serverErrors: 0 },
    capacityUnits: { read: 0, write: 0 },
  };
}

const numberOf = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) ? value : 0;

type Path = readonly [keyof Usage] | readonly [keyof Usage, string];

/** The counter at `path` of a usage, as a number. */
function valueAt(usage: Usage, path: Path): number {
  const [field, nested] = path;
  const value =
    nested === undefined ? usage[field] : (usage[field] as unknown as Record<string, number>)[nested];
  return typeof value === 'number' ? value : 0;
}

/** Adds `amount` to the counter at `path`. */
function addAt(usage: Usage, path: Path, amount: number): void {
  const [field, nested] = path;
  if (nested === undefined) (usage[field] as number) += amount;
  else {
    const group = usage[field] as unknown as Record<string, number>;
    group[nested] = (group[nested] ?? 0) + amount;
  }
}

/** Adds a usage item's counters (absent attributes are zero) into `into`. */
export function addCounters(into: Usage, item: Readonly<Record<string, unknown>>): Usage {
  for (const [attribute, path] of Object.entries(USAGE_COUNTERS)) {
    const amount = numberOf(item[attribute]);
    if (amount !== 0) addAt(into, path, amount);
  }
  return into;
}

/** `from`'s counters added into `into` (sums over the days of a period); stored bytes are no sum. */
export function addUsage(into: Usage, from: Usage): Usage {
  for (const path of Object.values(USAGE_COUNTERS)) addAt(into, path, valueAt(from, path));
  return into;
}

/**
 * Capacity units are fractions (0.5 per eventually consistent read): sums of many are rounded to
 * what the figure means (units to the thousandth) rather than showing a float's noise.
 */
export function rounded(usage: Usage): Usage {
  const round = (value: number) => Math.round(value * 1000) / 1000;
  usage.capacityUnits = { read: round(usage.capacityUnits.read), write: round(usage.capacityUnits.write) };
  return usage;
}

/** The metrics `GET /api/admin/usage/top` ranks by, with how each is read from a `Usage`. */
export const RANKED_METRICS = {
  conversationsCreated: (usage: Usage) => usage.conversationsCreated,
  messages: (usage: Usage) => usage.messages,
  events: (usage: Usage) => usage.events,
  apiRequests: (usage: Usage) => usage.apiRequests.total,
  'capacityUnits.read': (usage: Usage) => usage.capacityUnits.read,
  'capacityUnits.write': (usage: Usage) => usage.capacityUnits.write,
  'webhookDeliveries.attempted': (usage: Usage) => usage.webhookDeliveries.attempted,
  storedBytes: (usage: Usage) => usage.storedBytes,
  searchQueries: (usage: Usage) => usage.searchQueries,
} as const satisfies Record<string, (usage: Usage) => number>;

export type RankedMetric = keyof typeof RANKED_METRICS;
