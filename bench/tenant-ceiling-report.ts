/**
 * The tenant ceiling's figures from the layer's ledger (infra/local/dynamodb-semantics/ledger.ts),
 * and its tables. Partitions are named from the data, never from a list: each key value has its ids
 * replaced by placeholders (`ORG#o#CONVS#STATUS#open`, `ORG#o#EVENTS#n`), and values of one name
 * are one group. A group with about a value per request (at least 0.9 × the requests: a
 * conversation's partition when each request names another conversation) is per-entity and binds
 * nothing; any other value is shared: the tenant's requests keep landing on it whatever their ids,
 * and 1,000 WCU/s (3,000 RCU/s) over its units per request is a ceiling. A partition spread over n
 * shards is n values of one name, each taking its share.
 */
import type { LedgerPartition, LedgerSnapshot } from '../infra/local/dynamodb-semantics';
import {
  PARTITION_READ_UNITS_PER_SECOND,
  PARTITION_WRITE_UNITS_PER_SECOND,
} from '../infra/local/dynamodb-semantics/config';
import { MISS, PASS, section, table, type Verdict } from './report';

/** Placeholders for the ids that follow these segments; any other id is `id`. */
const LABELS: Record<string, string> = {
  ORG: 'o',
  CONV: 'c',
  VISITOR: 'v',
  OPERATOR: 'op',
  SESSION: 's',
  RATE: 'cred',
  VTOKEN: 't',
  APIKEY: 'key',
  IDEMPOTENCY: 'key',
  UPLOAD: 'u',
  SURVEY: 'sv',
  WEBHOOK: 'wh',
  EXPORT_JOB: 'job',
  TEAM: 'team',
  MSG: 'm',
  NOTE: 'n',
  REV: 'm',
  EVENT: 'e',
  AUDIT: 'a',
  RT: 'rt',
  CONN: 'conn',
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isId(segment: string): boolean {
  return UUID.test(segment) || (/^[\w-]{16,}$/.test(segment) && /\d/.test(segment) && /[a-z]/i.test(segment));
}

/** A key with its ids, days, instants and shard numbers as placeholders. */
export function placeholder(key: string): string {
  const parts = key.split('#');
  return parts
    .map((part, i) => {
      if (i === 0) return part;
      const previous = parts[i - 1] ?? '';
      if (isId(part)) return LABELS[previous] ?? 'id';
      if (/^\d{4}-\d{2}-\d{2}/.test(part)) return 'day';
      if (/^\d+$/.test(part)) return part.length >= 10 ? 't' : 'n';
      return part;
    })
    .join('#');
}

export interface PartitionFigure {
  /** `gsi2 ORG#o#CONVS#STATUS#open`: the index (or `table`) and the key's placeholder. */
  name: string;
  /** Key values of that name the run wrote or read. */
  values: number;
  shared: boolean;
  /**
   * Write units (all; on the request path) and read units of one value. Shared: per request of the
   * run, the mean of its values (shards: the share each gets once a tenant's many conversations
   * spread evenly; a run of N requests spreads them unevenly, `wcuHottest` is its hottest value's).
   * Per-entity: per request on its own value.
   */
  wcu: number;
  wcuPath: number;
  wcuHottest: number;
  rcu: number;
}

export interface ItemFigure {
  /** `ORG#o#CONV#c CONVERSATION`. */
  name: string;
  values: number;
  shared: boolean;
  /** Committed transactions naming one value (as `PartitionFigure.wcu`: shared, per request of the run; per-entity, per request on its own), and those cancelled for it per request. */
  transactions: number;
  conflicts: number;
}

export interface WriteFigure {
  write: string;
  pattern: string;
  requests: number;
  statuses: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  /** Write units per request, everything the run caused (the request and the stream's workers after it), and the request's own. */
  wcu: number;
  wcuPath: number;
  rcu: number;
  /** DynamoDB requests per request on the request path, by operation. */
  operations: Record<string, number>;
  /** The hottest partitions by write units per request (shared ones and per-entity ones). */
  partitions: PartitionFigure[];
  /** The hottest by read units. */
  reads: PartitionFigure[];
  items: ItemFigure[];
  /** Requests/s one tenant gets from the hottest shared partition's writes (reads), and that partition. */
  ceiling: number | null;
  bound: string | null;
  /** Other shared partitions within 1 % of the bound's units: as hot. */
  tied: string[];
  readCeiling: number | null;
  readBound: string | null;
  throttles: number;
  /** The first answer with another status than expected. */
  failure?: string;
}

interface Group<T> {
  name: string;
  values: T[];
}

function groups<T>(entries: readonly T[], nameOf: (entry: T) => string): Group<T>[] {
  const byName = new Map<string, T[]>();
  for (const entry of entries) {
    const name = nameOf(entry);
    const values = byName.get(name);
    if (values) values.push(entry);
    else byName.set(name, [entry]);
  }
  return [...byName].map(([name, values]) => ({ name, values }));
}

const partitionName = (each: LedgerPartition) => `${each.index ?? 'table'} ${placeholder(each.key)}`;

/**
 * The figures of one write repeated `requests` times: `path` is the ledger when the last answer
 * came (the stream's workers held), `total` once they had done what the run gave them.
 */
export function writeFigure(options: {
  write: string;
  pattern: string;
  requests: number;
  path: LedgerSnapshot;
  total: LedgerSnapshot;
  statuses: Record<string, number>;
  latenciesMs: number[];
  failure?: string | undefined;
}): WriteFigure {
  const { requests, path, total } = options;
  // A value per request (a conversation's, a visitor's): N requests spread over s shards by hash
  // hit s·(1 − e^(−N/s)) values, fewer than 0.9·N unless s is several times N.
  const perEntity = (values: number) => values >= 0.9 * requests;
  const pathUnits = new Map<string, number>();
  for (const { name, values } of groups(path.partitions, partitionName))
    pathUnits.set(
      name,
      values.reduce((sum, each) => sum + each.writeUnits, 0),
    );
  const partitions: PartitionFigure[] = groups(total.partitions, partitionName).map(({ name, values }) => {
    const shared = !perEntity(values.length);
    const sum = (pick: (each: LedgerPartition) => number) =>
      values.reduce((all, each) => all + pick(each), 0);
    // Shared: per request of the run; per-entity: per request on its own value (≈ one each).
    const per = shared ? values.length * requests : values.length;
    return {
      name,
      values: values.length,
      shared,
      wcu: sum((each) => each.writeUnits) / per,
      wcuPath: (pathUnits.get(name) ?? 0) / per,
      wcuHottest: Math.max(...values.map((each) => each.writeUnits)) / requests,
      rcu: sum((each) => each.readUnits) / per,
    };
  });
  const items: ItemFigure[] = groups(
    total.items,
    (each) => `${placeholder(each.pk)}${each.sk === null ? '' : ` ${placeholder(each.sk)}`}`,
  ).map(({ name, values }) => {
    const shared = !perEntity(values.length);
    const transactions = values.reduce((sum, each) => sum + each.transactions, 0);
    return {
      name,
      values: values.length,
      shared,
      transactions: transactions / (shared ? values.length * requests : values.length),
      conflicts: values.reduce((sum, each) => sum + each.conflicts, 0) / requests,
    };
  });
  const shared = partitions.filter((each) => each.shared);
  const byWrites = shared.filter((each) => each.wcu > 0).sort((a, b) => b.wcu - a.wcu)[0];
  const tied = byWrites
    ? shared.filter((each) => each !== byWrites && each.wcu >= byWrites.wcu * 0.99).map((each) => each.name)
    : [];
  const byReads = shared.filter((each) => each.rcu > 0).sort((a, b) => b.rcu - a.rcu)[0];
  const sum = (snapshot: LedgerSnapshot, pick: (each: LedgerPartition) => number) =>
    snapshot.partitions.reduce((all, each) => all + pick(each), 0);
  const sorted = [...options.latenciesMs].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return {
    write: options.write,
    pattern: options.pattern,
    requests,
    statuses: options.statuses,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    wcu: sum(total, (each) => each.writeUnits) / requests,
    wcuPath: sum(path, (each) => each.writeUnits) / requests,
    rcu: sum(total, (each) => each.readUnits) / requests,
    operations: Object.fromEntries(
      Object.entries(path.requests)
        .filter(([operation]) => operation !== '')
        .map(([operation, count]) => [operation, count / requests]),
    ),
    partitions: [
      ...shared
        .filter((each) => each.wcu > 0)
        .sort((a, b) => b.wcu - a.wcu)
        .slice(0, 6),
      ...partitions
        .filter((each) => !each.shared)
        .sort((a, b) => b.wcu - a.wcu)
        .slice(0, 3),
    ],
    reads: [...shared].sort((a, b) => b.rcu - a.rcu).slice(0, 3),
    items: [
      ...items
        .filter((each) => each.shared && each.transactions > 0)
        .sort((a, b) => b.transactions - a.transactions),
      ...items
        .filter((each) => !each.shared && each.transactions > 0)
        .sort((a, b) => b.transactions - a.transactions)
        .slice(0, 2),
    ],
    ceiling: byWrites ? PARTITION_WRITE_UNITS_PER_SECOND / byWrites.wcu : null,
    bound: byWrites?.name ?? null,
    tied,
    readCeiling: byReads ? PARTITION_READ_UNITS_PER_SECOND / byReads.rcu : null,
    readBound: byReads?.name ?? null,
    throttles: total.throttles,
    ...(options.failure ? { failure: options.failure } : {}),
  };
}

/** One level of the scaled run: a tenant's mixed load at a rate divided by the partition divisor. */
export interface ScaledLevel {
  /** Posts/s in AWS terms (what the level stands for) and as offered here (÷ divisor). */
  postsPerSecond: number;
  offeredPerSecond: number;
  /** Every request offered, posts and the rest (creates, PATCHes). */
  offered: number;
  sent: number;
  /** Not sent: the client's concurrency cap was reached (the service answered too slowly). */
  skipped: number;
  durationMs: number;
  statuses: Record<string, number>;
  byKind: Record<string, Record<string, number>>;
  p50Ms: number;
  p99Ms: number;
  /** Posts answered 201 per second of the window, × divisor: the AWS-equivalent rate achieved. */
  achievedPostsPerSecond: number;
  /** Refusals for throughput the layer answered (the SDK and the service retried them). */
  throttles: number;
  throttledPartitions: { name: string; throttles: number }[];
  transactionConflicts: number;
  loadAverage: string;
}

export interface ScaledResult {
  divisor: number;
  mix: string;
  levels: ScaledLevel[];
  error?: string;
}

export interface TenantCeilingResult {
  requests: number;
  figures: WriteFigure[];
  figuresError?: string;
  scaled?: ScaledResult;
  /** Load averages (1 min) at the start and end of the phases. */
  load: { figures: string; scaled: string };
  elapsedMs: number;
  note: string;
}

/** Throttles by partition name in a snapshot, most first. */
export function throttledPartitions(snapshot: LedgerSnapshot): { name: string; throttles: number }[] {
  return groups(
    snapshot.partitions.filter((each) => each.throttles > 0),
    partitionName,
  )
    .map(({ name, values }) => ({ name, throttles: values.reduce((sum, each) => sum + each.throttles, 0) }))
    .sort((a, b) => b.throttles - a.throttles);
}

const fixed = (value: number, digits = 2) =>
  Number.isInteger(value) ? String(value) : value.toFixed(digits);
const rate = (value: number | null) =>
  value === null ? '—' : value >= 100 ? Math.round(value).toLocaleString('en') : value.toFixed(1);

/**
 * Issue 37's goals, judged on the writes into distinct conversations: write units on the request
 * path (what a request's own writes cost; the stream consumer's part is paid once per record, off
 * it), and the rate one tenant sustains before its hottest shared partition binds.
 */
const GOALS: readonly { what: string; writes: RegExp; most?: number; atLeast?: number }[] = [
  { what: 'post: write units on the request path', writes: /^post /, most: 20 },
  { what: 'create: write units on the request path', writes: /^create /, most: 14 },
  { what: 'PATCH: write units on the request path', writes: /^PATCH /, most: 12 },
  { what: 'snooze: write units on the request path', writes: /^snooze/, most: 14 },
  { what: 'posts a second one tenant sustains', writes: /^post /, atLeast: 1_000 },
  { what: 'creates a second one tenant sustains', writes: /^create /, atLeast: 500 },
];

/** The goals' verdicts, and the scaled run's: no 5xx at any level. */
export function tenantCeilingVerdicts(result: TenantCeilingResult): Verdict[] {
  const verdicts: Verdict[] = [];
  for (const goal of GOALS) {
    const figures = result.figures.filter(
      (figure) => figure.pattern === 'distinct' && goal.writes.test(figure.write),
    );
    if (figures.length === 0) continue;
    if (goal.most !== undefined) {
      const worst = Math.max(...figures.map((figure) => figure.wcuPath));
      verdicts.push({
        what: goal.what,
        ok: worst <= goal.most,
        detail: `${worst.toFixed(1)}, at most ${goal.most}`,
      });
    } else if (goal.atLeast !== undefined) {
      const least = Math.min(...figures.map((figure) => figure.ceiling ?? Number.POSITIVE_INFINITY));
      verdicts.push({
        what: goal.what,
        ok: least >= goal.atLeast,
        detail: `${rate(least)}, at least ${goal.atLeast.toLocaleString('en')}`,
      });
    }
  }
  const levels = result.scaled?.levels ?? [];
  if (levels.length > 0) {
    const serverErrors = levels.reduce(
      (sum, level) =>
        sum +
        Object.entries(level.statuses)
          .filter(([status]) => status.startsWith('5') || status === 'error')
          .reduce((each, [, count]) => each + count, 0),
      0,
    );
    verdicts.push({
      what: 'scaled run: answers 5xx',
      ok: serverErrors === 0,
      detail: `${serverErrors} up to ${Math.max(...levels.map((level) => level.postsPerSecond)).toLocaleString('en')} posts/s`,
    });
  }
  return verdicts;
}

export function reportTenantCeiling(result: TenantCeilingResult, verdicts: Verdict[] = []): void {
  section(
    '10. The tenant ceiling — one organization’s writes in AWS terms (1,000 WCU/s, 3,000 RCU/s a partition key value)',
  );
  console.log(
    `  each write ${result.requests}× one after another, one organization; units from the DynamoDB layer's ledger (DYNAMODB_LEDGER=on: billed as AWS does: in a transaction 2 units a KB of each item written or checked, its index entries at their own price; an index move is a delete and a put); WCU/request counts the request and what the stream's workers wrote for it (path + background)`,
  );
  if (result.figuresError) console.log(`  ✗ per-write figures failed: ${result.figuresError}`);
  if (result.figures.length > 0) {
    console.log(
      table(
        [
          'write',
          'pattern',
          '>WCU/request',
          '>(path + bg)',
          'hottest shared partition',
          '>its WCU/request',
          '>ceiling req/s',
          '>read ceiling',
          'statuses',
        ],
        result.figures.map((figure) => {
          const hottest = figure.partitions.find((each) => each.name === figure.bound);
          return [
            figure.write,
            figure.pattern,
            fixed(figure.wcu, 1),
            `${fixed(figure.wcuPath, 1)} + ${fixed(Math.max(0, figure.wcu - figure.wcuPath), 1)}`,
            figure.bound
              ? `${figure.bound}${hottest && hottest.values > 1 ? ` (${hottest.values} values)` : ''}${figure.tied.length ? ` +${figure.tied.length} as hot` : ''}`
              : '—',
            hottest ? fixed(hottest.wcu, 2) : '—',
            rate(figure.ceiling),
            figure.readCeiling !== null && (figure.ceiling === null || figure.readCeiling < figure.ceiling)
              ? `${rate(figure.readCeiling)} ✗ ${figure.readBound}`
              : rate(figure.readCeiling),
            Object.entries(figure.statuses)
              .map(([status, count]) => `${status}×${count}`)
              .join(' '),
          ];
        }),
      ),
    );
    console.log(
      '  ceiling: 1,000 ÷ the WCU per request on the hottest shared partition key value (per-entity values, one per conversation or visitor of the run, bind nothing); read ceiling: 3,000 ÷ RCU per request likewise (✗ where it binds first)',
    );
    console.log('');
    console.log(
      "  where the units land, per write: ⚑ shared partitions, hottest first (×n: values of that name), WCU per request on one value (n values: their mean, the hottest in brackets) and the request path's part; then · per-entity ones, WCU per request on its own value",
    );
    for (const figure of result.figures) {
      console.log(
        `    ${figure.write} (${figure.pattern}): ${figure.partitions
          .slice(0, 7)
          .map(
            (each) =>
              `${each.shared ? '⚑' : '·'} ${each.name}${each.values > 1 ? `×${each.values}` : ''} ${fixed(each.wcu)}${each.shared && each.values > 1 ? ` [${fixed(each.wcuHottest)}]` : ''}${each.shared ? ` (path ${fixed(each.wcuPath)})` : ''}`,
          )
          .join(' · ')}`,
      );
    }
    console.log('');
    console.log(
      '  hottest items by transactions: ⚑ shared, per request of the run on one value (n values: their mean); · per-entity, per request on its own item',
    );
    console.log(
      table(
        ['write', 'pattern', 'items (transactions per request)', '>DynamoDB calls/request (path)'],
        result.figures.map((figure) => [
          figure.write,
          figure.pattern,
          figure.items
            .map(
              (each) =>
                `${each.shared ? '⚑' : '·'} ${each.name}${each.values > 1 ? `×${each.values}` : ''} ${fixed(each.transactions)}`,
            )
            .join(' · ') || '—',
          fixed(
            Object.values(figure.operations).reduce((sum, count) => sum + count, 0),
            1,
          ),
        ]),
      ),
    );
    const failures = result.figures.filter((figure) => figure.failure);
    for (const figure of failures) console.log(`  ✗ ${figure.write} (${figure.pattern}): ${figure.failure}`);
  }
  const scaled = result.scaled;
  if (scaled) {
    console.log('');
    console.log(
      `  scaled run: partition limits ÷ ${scaled.divisor} (DYNAMODB_PARTITION_DIVISOR=${scaled.divisor}: ${PARTITION_WRITE_UNITS_PER_SECOND / scaled.divisor} WCU/s, ${PARTITION_READ_UNITS_PER_SECOND / scaled.divisor} RCU/s a partition), one tenant's mixed load offered at rate ÷ ${scaled.divisor}; mix ${scaled.mix}`,
    );
    if (scaled.error) console.log(`  ✗ scaled run failed: ${scaled.error}`);
    if (scaled.levels.length > 0)
      console.log(
        table(
          [
            '>AWS posts/s',
            '>offered here/s',
            '>sent',
            '>skipped',
            'statuses',
            '>5xx',
            '>p50 ms',
            '>p99 ms',
            '>achieved posts/s (AWS)',
            '>throttles',
            'throttled most',
            '>load',
          ],
          scaled.levels.map((level) => [
            level.postsPerSecond.toLocaleString('en'),
            level.offeredPerSecond.toFixed(1),
            String(level.sent),
            String(level.skipped),
            Object.entries(level.statuses)
              .map(([status, count]) => `${status}×${count}`)
              .join(' '),
            String(
              Object.entries(level.statuses)
                .filter(([status]) => status.startsWith('5') || status === 'error')
                .reduce((sum, [, count]) => sum + count, 0),
            ),
            Math.round(level.p50Ms).toLocaleString('en'),
            Math.round(level.p99Ms).toLocaleString('en'),
            Math.round(level.achievedPostsPerSecond).toLocaleString('en'),
            String(level.throttles),
            level.throttledPartitions
              .slice(0, 2)
              .map((each) => `${each.name} ${each.throttles}`)
              .join(' · ') || '—',
            level.loadAverage,
          ]),
        ),
      );
    for (const level of scaled.levels)
      console.log(
        `    ${level.postsPerSecond.toLocaleString('en')} posts/s by kind: ${Object.entries(level.byKind)
          .map(
            ([kind, statuses]) =>
              `${kind} ${Object.entries(statuses)
                .map(([status, count]) => `${status}×${count}`)
                .join(' ')}`,
          )
          .join(
            ' · ',
          )}${level.transactionConflicts ? `; ${level.transactionConflicts} transaction conflicts` : ''}`,
      );
    console.log(
      '  throttles: ProvisionedThroughputExceeded / ThrottlingError answers of the layer, each retried by the SDK or the service within the request’s budget; a 503 is a request whose budget ran out; skipped: not sent, the client’s concurrency cap was full',
    );
  }
  console.log(`  load average (1 min): figures ${result.load.figures}; scaled ${result.load.scaled}`);
  const judged = tenantCeilingVerdicts(result);
  if (judged.length > 0) {
    console.log('  goals (issue 37, writes into distinct conversations):');
    for (const verdict of judged)
      console.log(`    ${verdict.ok ? PASS : MISS} ${verdict.what}: ${verdict.detail}`);
  }
  verdicts.push(...judged);
  console.log(`  ${result.note}`);
}
