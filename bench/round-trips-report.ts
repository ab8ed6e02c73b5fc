/**
 * Phases 4 and 4b's tables: round trips per request (cold and warm, by purpose) and the warm
 * requests' capacity units by table and index, judged against their targets. Used by `npm run
 * bench` and by `round-trips-main.ts --report`.
 */
import { MISS, mark, section, table, type Verdict } from './report';
import {
  type EndpointResult,
  type Measured,
  type Purpose,
  purposeLetter,
  type RoundTripReport,
} from './round-trips';

/** What the warm round trips are judged against. */
const TRIP_TARGETS = {
  warmReadTrips: 1,
  /** A child read whose access rule needs the parent (issue 14): the parent's read and the page's. */
  warmChildReadRequests: 2,
  /** A listing: the index names the page (parallel Queries share a trip), one BatchGetItem reads it. */
  listingTrips: 2,
  /** Single-conversation writes: the route's warm operations hold exactly this many transactions. */
  warmWriteTransactions: 1,
};

/**
 * Issue 14's goals: write units of the conversation changes (table and indexes together, every
 * caller; the route is enough to name them: the worst variant must meet it).
 */
const WRITE_UNIT_GOALS: Record<string, number> = {
  'POST /api/conversations/{id}/messages': 20,
  'POST /api/conversations': 14,
  'PATCH /api/conversations/{id}': 12,
  'PATCH /api/conversations/{id}/locale': 12,
  'PUT /api/conversations/{id}/follow-up': 12,
  'DELETE /api/conversations/{id}/snooze': 12,
  'POST /api/conversations/{id}/snooze': 14,
  'PATCH /api/conversations/{id}/messages/{messageId}': 12,
};
const units = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(1));

const breakdown = (measured: Measured | undefined): string => {
  if (!measured) return '—';
  const { sends, byPurpose } = measured.tally;
  const parts = (Object.keys(byPurpose) as Purpose[])
    .filter((purpose) => byPurpose[purpose] > 0)
    .map((purpose) => `${purposeLetter[purpose]}${byPurpose[purpose]}`);
  return parts.length > 0 ? `${sends} = ${parts.join('+')}` : String(sends);
};
function judge(result: EndpointResult): { ok: boolean; target: string; why: string } {
  const warmTrip = result.warm?.tally;
  if (result.error || !warmTrip || !result.cold)
    return { ok: false, target: '', why: result.error ?? 'not measured' };
  const statuses = [result.cold.status, result.warm?.status];
  if (statuses.some((status) => status !== result.expectedStatus))
    return { ok: false, target: '', why: `status ${statuses.join('/')} (expected ${result.expectedStatus})` };
  if (warmTrip.attempts !== warmTrip.sends)
    return { ok: false, target: '', why: `${warmTrip.attempts - warmTrip.sends} retried attempts` };
  const overhead = warmTrip.byPurpose.auth + warmTrip.byPurpose.rate;
  if (result.target === 'listing') {
    const ok = warmTrip.trips <= TRIP_TARGETS.listingTrips && overhead === 0;
    return {
      ok,
      target: `≤ ${TRIP_TARGETS.listingTrips} trips, A0`,
      why: ok ? '' : `${warmTrip.trips} trips one after another`,
    };
  }
  if (result.target === 'read') {
    const ok = warmTrip.sends <= TRIP_TARGETS.warmReadTrips && overhead === 0;
    return {
      ok,
      target: `≤ ${TRIP_TARGETS.warmReadTrips}, A0`,
      why: ok ? '' : 'read needs more than one trip warm',
    };
  }
  if (result.target === 'ownLimit') {
    const ok = warmTrip.byPurpose.auth === 0 && warmTrip.byPurpose.rate <= 1;
    return {
      ok,
      target: "A0, R ≤ 1 (the route's own limit)",
      why: ok ? '' : 'auth hit DynamoDB warm, or more than the route’s own limit window',
    };
  }
  if (result.target === 'childRead') {
    const ok = warmTrip.sends <= TRIP_TARGETS.warmChildReadRequests && overhead === 0;
    return {
      ok,
      target: `≤ ${TRIP_TARGETS.warmChildReadRequests} (parent + page), A0`,
      why: ok ? '' : `${warmTrip.sends} requests warm: more than the parent and the page`,
    };
  }
  if (result.target === 'uncached') {
    const ok = warmTrip.byPurpose.auth <= 1 && warmTrip.byPurpose.rate === 0 && warmTrip.byPurpose.route <= 1;
    return {
      ok,
      target: 'A ≤ 1 (never cached), R0, H ≤ 1',
      why: ok ? '' : 'more than the credential read and one write warm',
    };
  }
  if (result.target === 'transaction') {
    const transactions = warmTrip.routeOperations.filter(
      (operation) => operation === 'TransactWriteItems',
    ).length;
    const ok = transactions === TRIP_TARGETS.warmWriteTransactions && overhead === 0;
    const why = [
      transactions === TRIP_TARGETS.warmWriteTransactions ? '' : `${transactions} TransactWriteItems`,
      overhead === 0 ? '' : 'auth or rate limit hit DynamoDB warm',
    ]
      .filter(Boolean)
      .join('; ');
    return { ok, target: `${TRIP_TARGETS.warmWriteTransactions} TransactWriteItems, A0 R0`, why };
  }
  const ok = overhead === 0;
  return {
    ok,
    target:
      result.target === 'bulk'
        ? 'A0 R0 (scales with ids)'
        : result.target === 'stream'
          ? 'A0 R0 (pages: phase 7)'
          : 'A0 R0',
    why: ok ? '' : 'auth or rate limit hit DynamoDB warm',
  };
}

/** Prints sections 4 and 4b; adds a verdict per judged row. */
export function reportRoundTrips(
  trips: RoundTripReport | undefined,
  error: string | undefined,
  verdicts: Verdict[],
): void {
  section('4. DynamoDB round trips per request (local gateway → handlers → DynamoDB Local)');
  if (trips) {
    const rows = trips.results.map((result) => {
      const verdict = judge(result);
      const label = `${result.route}${result.variant ? ` [${result.variant}]` : ''}`;
      verdicts.push({
        what: `round trips ${label} (${result.caller})`,
        ok: verdict.ok,
        detail: `cold ${breakdown(result.cold)}, warm ${breakdown(result.warm)}${verdict.why ? `; ${verdict.why}` : ''}`,
      });
      return [
        label,
        result.caller,
        result.cold && result.warm ? `${result.cold.status}/${result.warm.status}` : '—',
        breakdown(result.cold),
        breakdown(result.warm),
        result.warm?.tally.operations.join(', ') ?? '',
        verdict.target,
        `${mark(verdict.ok)}${verdict.why ? ` ${verdict.why}` : ''}`,
      ];
    });
    for (const route of trips.uncovered) {
      verdicts.push({ what: `round trips ${route}`, ok: false, detail: 'no bench scenario for this route' });
      rows.push([route, '', '', '', '', '', '', `${MISS} no bench scenario`]);
    }
    console.log(
      table(
        ['endpoint', 'caller', 'status', '>cold', '>warm', 'warm operations', 'target (warm)', 'ok'],
        rows,
      ),
    );
    console.log(
      '  A auth (credential + organization) · R rate-limit lease · I idempotency record · H the route itself',
    );
    console.log(
      '  cold = first request of a fresh container (auth cache empty, no rate-limit lease in this window);' +
        ' warm = the same request repeated',
    );
    console.log(`  ${trips.counterNote}`);
  } else {
    console.log(`  ${MISS} not measured: ${error}`);
    verdicts.push({ what: 'round trips', ok: false, detail: error ?? 'failed' });
  }

  section('4b. DynamoDB capacity units per request, warm (DynamoDB Local, ReturnConsumedCapacity INDEXES)');
  if (trips) {
    const indexes = [
      ...new Set(
        trips.results.flatMap((result) =>
          Object.keys(result.warm?.tally.capacity.writeBy ?? {}).filter((where) => where !== 'table'),
        ),
      ),
    ].sort();
    const rows = trips.results.flatMap((result) => {
      const capacity = result.warm?.tally.capacity;
      if (!capacity || (capacity.write === 0 && capacity.read === 0)) return [];
      const label = `${result.route}${result.variant ? ` [${result.variant}]` : ''}`;
      // The goals are the change itself; an Idempotency-Key adds its record (claim and completion).
      const goal = result.variant.includes('Idempotency') ? undefined : WRITE_UNIT_GOALS[result.route];
      const ok = goal === undefined || capacity.write <= goal;
      if (goal !== undefined)
        verdicts.push({
          what: `write units ${label} (${result.caller})`,
          ok,
          detail: `${units(capacity.write)} (table ${units(capacity.writeBy.table ?? 0)}, indexes ${units(capacity.write - (capacity.writeBy.table ?? 0))}; goal ≤ ${goal})`,
        });
      return [
        [
          label,
          result.caller,
          units(capacity.write),
          units(capacity.writeBy.table ?? 0),
          ...indexes.map((index) => units(capacity.writeBy[index] ?? 0)),
          units(capacity.read),
          goal === undefined ? '' : `≤ ${goal} ${mark(ok)}`,
        ],
      ];
    });
    console.log(
      table(
        [
          'endpoint',
          'caller',
          '>WCU',
          '>table',
          ...indexes.map((index) => `>${index}`),
          '>RCU',
          'goal (WCU)',
        ],
        rows,
      ),
    );
    console.log(
      '  every command of the request counted (auth, rate limit, idempotency, route); transactions cost double;' +
        ' DynamoDB Local charges nothing for a ConditionCheck inside a transaction',
    );
  } else {
    console.log(`  ${MISS} not measured: ${error}`);
  }
}
