import type { SearchResult } from './protocol';
import { mark, section, table, type Verdict } from './report';

/** `npm run bench`'s default size: 1–2 minutes on 2 cores. The issue's reference: 1,000,000. */
export const SEARCH_DEFAULT_MESSAGES = 20_000;

/** Issue 25's goals (local stack, 100,000 conversations and 1,000,000 messages). */
export const SEARCH_TARGETS = { lagP99Ms: 5_000, queryP99Ms: 300, referenceMessages: 1_000_000 };

const n = (value: number) => Math.round(value).toLocaleString('en');
const s1 = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;

/** Phase 8 of the report (also printed by `search-main.ts --report`). */
export function reportSearch(result: SearchResult, verdicts: Verdict[]): void {
  const rate = result.tablePut.conversations / (result.tablePut.ms / 1000);
  const size = `${n(result.messages)} messages / ${n(result.conversations)} conversations`;
  const reference = result.messages >= SEARCH_TARGETS.referenceMessages;
  section(
    `8. Search — ${size}${reference ? '' : ` (below the issue's ${n(SEARCH_TARGETS.referenceMessages)}: run search-main.ts --messages=1000000 --report)`}; searchable p99 ≤ ${s1(SEARCH_TARGETS.lagP99Ms)}, query p99 ≤ ${SEARCH_TARGETS.queryP99Ms} ms`,
  );
  console.log(
    `  seed: ${n(result.seedRows)} index rows through the stream worker's projection and writer, in bulk, in ${s1(result.seedMs)} (${n(result.messages / (result.seedMs / 1000))} messages/s); messages only in the index,` +
      ` ${n(result.tablePut.conversations)} of the ${n(result.conversations)} conversations (a sample, and every one the measured queries' first pages show) in the table by BatchWriteItem in ${s1(result.tablePut.ms)} (${n(rate)}/s: all ${n(result.conversations)} would take ~${s1((result.conversations / rate) * 1000)}), re-projected by the stream worker in ${s1(result.streamCatchUpMs)} more; VACUUM ANALYZE ${s1(result.vacuumMs)}`,
  );
  const st = result.storage;
  const total = st.documentBytes + st.conversationBytes;
  console.log(
    `  write cost: 1 index row per message (+1 conversation row, with the conversation's word and word-pair vectors, and 1 title row per conversation): ${n(st.documents)} document rows, ${n(st.conversations)} conversation rows;` +
      ` ${mib(total)} in all = ${n(total / st.messageDocuments)} B per message (documents ${mib(st.documentBytes)}: heap+TOAST ${mib(st.documentHeapBytes)}, indexes ${mib(st.documentIndexBytes)} of which the GIN terms index ${mib(st.termsIndexBytes)}; conversations ${mib(st.conversationBytes)})`,
  );
  const lagOk = result.lag.p99 <= SEARCH_TARGETS.lagP99Ms;
  verdicts.push({
    what: 'search: commit → searchable p99',
    ok: lagOk,
    detail: `p50 ${n(result.lag.p50)} ms, p99 ${n(result.lag.p99)} ms (${result.lag.count} samples; goal ≤ ${n(SEARCH_TARGETS.lagP99Ms)} ms)`,
  });
  console.log(
    `  ${mark(lagOk)} index lag (the message's createdAt → the first search that finds it, polled every 50 ms, ${result.lag.count} samples, 5 conversations at a time): p50 ${n(result.lag.p50)} ms, p99 ${n(result.lag.p99)} ms, max ${n(result.lag.max)} ms; the POSTs took p50 ${n(result.postMs.p50)} ms (load ${result.load.lag})`,
  );
  console.log(
    `  queries through the HTTP API (limit 20, ${result.queries[0]?.ms.count ?? 0} runs each after 3 warm-ups; relevance ranks the newest 1,000 matches (RANK_WINDOW); load ${result.load.queries}):`,
  );
  console.log(
    table(
      ['query', 'q', '>total', '>p50', '>p99', '>max', 'goal'],
      result.queries.map((query) => {
        const ok =
          query.ms.p99 <= SEARCH_TARGETS.queryP99Ms && query.statuses.every((status) => status === 200);
        verdicts.push({
          what: `search query p99: ${query.name}`,
          ok,
          detail: `p50 ${n(query.ms.p50)} ms, p99 ${n(query.ms.p99)} ms at ${size}${query.statuses.some((status) => status !== 200) ? `; statuses ${query.statuses.join(',')}` : ''}`,
        });
        return [
          query.name,
          `${query.q}${query.sort ? ` (sort=${query.sort})` : ''}`,
          `${n(query.total)}${query.totalCapped ? '+' : ''}`,
          `${n(query.ms.p50)} ms`,
          `${n(query.ms.p99)} ms`,
          `${n(query.ms.max)} ms`,
          mark(ok),
        ];
      }),
    ),
  );
  const rb = result.rebuild;
  const perSecond = rb.messages / (rb.ms / 1000);
  console.log(
    `  rebuild (npm run search:reindex's rebuildIndex, --fresh, one organization of ${n(rb.messages)} messages / ${n(rb.conversations)} conversations read from the table): ${s1(rb.ms)} = ${n(perSecond)} messages/s` +
      ` (${n(rb.rows)} rows; index rows before ${n(rb.rowsBefore)}, after ${n(rb.rowsAfter)}; load ${result.load.rebuild});` +
      ` extrapolated to ${n(result.messages)} messages: ~${s1((result.messages / perSecond) * 1000)}`,
  );
  console.log(
    `  the stream worker, fed by BatchWriteItem of those ${n(rb.messages)} messages (${s1(rb.tableSeedMs)}): all searchable ${s1(rb.streamIndexMs)} after the first put`,
  );
  verdicts.push({
    what: 'search rebuild keeps every row',
    ok: rb.rowsAfter === rb.rowsBefore,
    detail: `${n(rb.rowsBefore)} rows before, ${n(rb.rowsAfter)} after`,
  });
}
