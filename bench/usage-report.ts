import { MISS, PASS, section, table, type Verdict } from './report';

/** What `bench/usage-main.ts` measures (its `@@RESULT` line). */
export interface UsageBenchResult {
  load: string;
  requestPath: {
    requests: number;
    statuses: Record<string, number>;
    seconds: number;
    functions: number;
    flushIntervals: number;
    usageWrites: number;
    usageTransactions: number;
    usageWriteUnits: number;
    usageWritesPerRequest: number;
    allowedWrites: number;
    writeUnitsPerRequest: number;
    usageShareOfWriteUnits: number;
  };
  query: {
    days: number;
    items: number;
    queries: number;
    readUnitsPerQuery: number;
    p50Ms: number;
    answerBytes: number;
  };
}

/** Phase 11: the usage metering's writes on the request path, and a 90-day usage query. */
export function reportUsage(result: UsageBenchResult, verdicts: Verdict[]): void {
  section('11. Usage metering');
  const { requestPath: path, query } = result;
  const ok = path.usageWrites <= path.allowedWrites;
  console.log(
    table(
      ['what', '>figure', 'goal'],
      [
        [
          `${path.requests.toLocaleString('en')} reads and posts, ${path.seconds} s, ${path.functions} functions`,
          `${path.usageWrites} usage writes (${path.usageWriteUnits} WCU, ${(path.usageShareOfWriteUnits * 100).toFixed(1)} % of the run's)`,
          `${ok ? PASS : MISS} ≤ ${path.allowedWrites} (1 per instance and 10 s interval); none in a request's transaction`,
        ],
        [
          `GET /api/usage, ${query.days} days (${query.items} items)`,
          `${query.readUnitsPerQuery.toFixed(1)} RCU, p50 ${query.p50Ms.toFixed(1)} ms, ${Math.round(query.answerBytes / 1024)} KiB`,
          '',
        ],
      ],
    ),
  );
  console.log(`  load average (1 min) at the end: ${result.load}`);
  verdicts.push({
    what: 'usage metering: writes per instance and interval',
    ok,
    detail: `${path.usageWrites} writes, at most ${path.allowedWrites}`,
  });
}
