/**
 * Phase 8, in its own process: search (issue 25). Starts the local stack (every worker, the search
 * index's stream worker among them; rate limit lifted), then:
 *
 * 1. seeds one organization with `--messages` messages in a tenth as many conversations: the index
 *    rows through the stream worker's projection and writer, in bulk (search-seed.ts); messages only
 *    in the index, the conversations also in the table (BatchWriteItem), because the search function
 *    reads the conversation of every hit from it. Then `VACUUM ANALYZE`, as autovacuum would;
 * 2. write cost: index rows and bytes per message (pg_total_relation_size, tables with their indexes);
 * 3. index lag: ~50 messages posted through the API into conversations of that tenant, each searched
 *    for (its own word) every 50 ms until found: lag = found − the message's `createdAt` (stamped
 *    just before the commit);
 * 4. query latency through the HTTP API (the gateway, the search function in its isolate, PostgreSQL,
 *    the BatchGetItem of the page's conversations): a common word, a rare word, a phrase, a filtered
 *    query, filters only;
 * 5. rebuild: a smaller organization seeded with its messages in the table (export-volume-seed.ts),
 *    rebuilt by `npm run search:reindex`'s code (`rebuildIndex`, `--fresh`), timed; the big tenant's
 *    rebuild is extrapolated from its rate (its messages are not in the table).
 *
 * Size: `--messages=<n>` or `BENCH_SEARCH_MESSAGES` (default 20,000). Standalone, with the report:
 * `npx tsx bench/search-main.ts --messages=1000000 --report`. Prints `@@RESULT <json>`.
 */
import { loadavg } from 'node:os';
import { type LocalStack, startLocalStack } from '../infra/local/stack';
import { RESULT_MARKER, type SearchQueryResult, type SearchResult } from './protocol';
import { distribution, MISS, PASS, type Verdict } from './report';
import { reportSearch, SEARCH_DEFAULT_MESSAGES } from './search-report';

const say = (line: string) => console.log(`[bench]   ${line}`);
const MESSAGES_PER_CONVERSATION = 10;
const LAG_LANES = 5;
const LAG_SAMPLES = 50;
const QUERY_RUNS = 40;
const QUERY_WARMUP = 3;
/** Conversations put into the table besides the measured pages' (all of them below this). */
const TABLE_SAMPLE = 2_000;
/** One in about 5,000 messages has it (search-seed.ts). */
const RARE_WORD = 'neloju';
const QUERIES: { name: string; q: string; sort?: string }[] = [
  { name: 'common word (relevance)', q: 'refund' },
  { name: 'rare word (relevance)', q: RARE_WORD },
  { name: 'phrase (relevance)', q: '"tracking number"' },
  { name: 'filtered: word + status + tag (relevance)', q: 'refund status:open tag:vip' },
  { name: 'filters only (newest)', q: 'status:open priority:high' },
  { name: 'common word, newest first', q: 'refund', sort: 'newest' },
];

let stack: LocalStack | undefined;

const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<SearchResult> {
  const messages = Number(
    (
      process.argv.find((arg) => arg.startsWith('--messages='))?.slice(11) ??
      process.env.BENCH_SEARCH_MESSAGES ??
      String(SEARCH_DEFAULT_MESSAGES)
    ).replaceAll('_', ''),
  );
  if (!Number.isInteger(messages) || messages < 1_000) throw new Error('--messages: at least 1000');
  const conversations = Math.max(100, Math.round(messages / MESSAGES_PER_CONVERSATION));
  const loadAtStart = load();
  const started = Date.now();
  say('starting the local stack (all workers, the search index worker among them)…');
  stack = await startLocalStack({
    port: 0,
    seedDemo: false,
    env: { POWERTOOLS_LOG_LEVEL: 'ERROR', RATE_LIMIT_PER_MINUTE: '1000000' },
  });
  say(`local stack ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const base = stack.baseUrl;
  // This process's own pool (the functions have theirs, in their isolates): two bulk writers.
  process.env.SEARCH_DB_POOL_MAX = '3';
  const { organizations } = await import('../shared/db/organizations');
  const { credentials } = await import('../shared/db/credentials');
  const { operators } = await import('../shared/db/operators');
  const { visitors } = await import('../shared/db/visitors');
  const { searchPool, closeSearchPool } = await import('../shared/search/connection');
  const { rebuildIndex } = await import('../shared/search/rebuild');
  const { seedSearchVolume, putConversations } = await import('./search-seed');
  const { seedVolume } = await import('./export-volume-seed');
  const pool = searchPool();

  async function tenant(name: string) {
    const organization = await organizations.create({
      name,
      modules: ['automation_api'],
      locales: ['en'],
      defaultLocale: 'en',
      historyWindowDays: null,
    });
    const key = await credentials.createApiKey(organization.id, { name: 'bench search', scopes: [] });
    if (!key) throw new Error('no API key');
    const operatorIds: string[] = [];
    for (let i = 0; i < 10; i++) {
      const created = await operators.create(organization.id, {
        name: `Operator ${i + 1}`,
        email: `operator${i + 1}@search.example`,
        role: 'operator',
      });
      if (created.ok) operatorIds.push(created.operator.id);
    }
    const visitorList = [];
    for (let i = 0; i < 50; i++)
      visitorList.push(
        (await visitors.createWithToken(organization.id, { identifier: `visitor${i + 1}@search.example` }, 1))
          .visitor,
      );
    return { orgId: organization.id, apiKey: key.key, operatorIds, visitors: visitorList };
  }

  const api = async <T>(method: string, path: string, apiKey: string, body?: unknown) => {
    const t0 = performance.now();
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, ms: performance.now() - t0, body: (text ? JSON.parse(text) : {}) as T };
  };
  type Page = { data: { conversation: { id: string } }[]; total: number; totalCapped?: boolean };
  const search = (apiKey: string, q: string, sort?: string) =>
    api<Page>(
      'GET',
      `/api/conversations/search?${new URLSearchParams({ q, ...(sort ? { sort } : {}) })}`,
      apiKey,
    );
  /** Polls until the query finds `total` conversations; the time it took. */
  const searchable = async (apiKey: string, q: string, timeoutMs: number): Promise<number> => {
    const t0 = Date.now();
    for (;;) {
      const found = await search(apiKey, q);
      if (found.status === 200 && found.body.total > 0) return Date.now();
      if (Date.now() - t0 > timeoutMs) throw new Error(`"${q}" not searchable after ${timeoutMs / 1000} s`);
      await sleep(50);
    }
  };

  // ── 1. the big tenant ────────────────────────────────────────────────────────────────────────────
  const big = await tenant(`Search volume ${messages}`);
  say(
    `seeding the index: ${messages.toLocaleString('en')} messages in ${conversations.toLocaleString('en')} conversations (projection + writer, bulk)…`,
  );
  const seeded = await seedSearchVolume({
    orgId: big.orgId,
    messages,
    conversations,
    visitors: big.visitors,
    operatorIds: big.operatorIds,
    pool,
    parallel: 2,
    progress: say,
  });
  say(
    `indexed ${seeded.messages.toLocaleString('en')} messages (${seeded.rows.toLocaleString('en')} rows) in ${(seeded.ms / 1000).toFixed(1)} s (${Math.round(seeded.messages / (seeded.ms / 1000)).toLocaleString('en')} messages/s)`,
  );
  // The search function reads each hit's conversation from the table. DynamoDB Local puts
  // conversation items (with their listing indexes) at ~100–400 a second here: a sample of them is
  // timed (and the rate extrapolated to all), plus every conversation the measured queries' first
  // pages show, so that every measured answer is whole.
  const { search: searchIndex } = await import('../shared/search/search');
  const wanted = new Set<string>([...seeded.conversationItems.keys()].slice(0, TABLE_SAMPLE));
  for (const query of QUERIES) {
    const found = await searchIndex({
      orgId: big.orgId,
      q: query.q,
      sort: query.sort as 'newest' | undefined,
      limit: 20,
    });
    for (const hit of found.hits) wanted.add(hit.conversationId);
  }
  const items = [...wanted].map((id) => seeded.conversationItems.get(id) ?? '');
  seeded.conversationItems.clear();
  say(
    `putting ${items.length.toLocaleString('en')} of the ${conversations.toLocaleString('en')} conversations into the table (BatchWriteItem)…`,
  );
  const tablePutMs = await putConversations(items, 8, say);
  say(`…in ${(tablePutMs / 1000).toFixed(1)} s; waiting for the stream worker to catch up on them…`);
  // The stream worker re-projects those conversations (same versions: no change); a conversation
  // created through the API after them is searchable once it has caught up.
  const catchUpStart = Date.now();
  const sentinel = `sentinel${crypto.randomUUID().slice(0, 8)}`;
  const created = await api<{ id: string }>('POST', '/api/conversations', big.apiKey, {
    visitorId: big.visitors[0]?.id,
    message: `catch-up ${sentinel}`,
  });
  if (created.status !== 201) throw new Error(`POST /api/conversations: ${created.status}`);
  await searchable(big.apiKey, sentinel, Math.max(120_000, items.length * 50));
  const streamCatchUpMs = Date.now() - catchUpStart;
  say(`stream worker caught up in ${(streamCatchUpMs / 1000).toFixed(1)} s; VACUUM ANALYZE…`);
  const vacuumStart = Date.now();
  await pool.query('VACUUM ANALYZE search_document');
  await pool.query('VACUUM ANALYZE search_conversation');
  const vacuumMs = Date.now() - vacuumStart;

  // ── 2. write cost ────────────────────────────────────────────────────────────────────────────────
  const { rows: sizeRows } = await pool.query<{
    documents: string;
    message_documents: string;
    conversations: string;
    document_bytes: string;
    document_heap: string;
    document_indexes: string;
    terms_index: string;
    conversation_bytes: string;
  }>(
    `SELECT (SELECT count(*) FROM search_document) AS documents,
       (SELECT count(*) FROM search_document WHERE kind = 'message') AS message_documents,
       (SELECT count(*) FROM search_conversation) AS conversations,
       pg_total_relation_size('search_document') AS document_bytes,
       pg_table_size('search_document') AS document_heap,
       pg_indexes_size('search_document') AS document_indexes,
       pg_relation_size('search_document_terms') AS terms_index,
       pg_total_relation_size('search_conversation') AS conversation_bytes`,
  );
  const sizes = sizeRows[0];
  if (!sizes) throw new Error('no sizes');
  const storage = {
    documents: Number(sizes.documents),
    messageDocuments: Number(sizes.message_documents),
    conversations: Number(sizes.conversations),
    documentBytes: Number(sizes.document_bytes),
    documentHeapBytes: Number(sizes.document_heap),
    documentIndexBytes: Number(sizes.document_indexes),
    termsIndexBytes: Number(sizes.terms_index),
    conversationBytes: Number(sizes.conversation_bytes),
  };
  say(
    `index: ${storage.documents.toLocaleString('en')} documents, ${storage.conversations.toLocaleString('en')} conversations, ${((storage.documentBytes + storage.conversationBytes) / 1048576).toFixed(1)} MiB`,
  );

  // ── 3. index lag ─────────────────────────────────────────────────────────────────────────────────
  say(
    `index lag: ${LAG_SAMPLES} messages posted through the API (${LAG_LANES} at a time), each searched for until found…`,
  );
  const lagLoad = load();
  const lanes: string[] = [];
  for (let i = 0; i < LAG_LANES; i++) {
    const lane = await api<{ id: string }>('POST', '/api/conversations', big.apiKey, {
      visitorId: big.visitors[i + 1]?.id,
      message: 'Where is my order?',
    });
    if (lane.status !== 201) throw new Error(`POST /api/conversations: ${lane.status}`);
    lanes.push(lane.body.id);
  }
  const lags: number[] = [];
  const postMs: number[] = [];
  await Promise.all(
    lanes.map(async (conversationId) => {
      for (let i = 0; i < LAG_SAMPLES / LAG_LANES; i++) {
        const word = `lag${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;
        const posted = await api<{ createdAt: string }>(
          'POST',
          `/api/conversations/${conversationId}/messages`,
          big.apiKey,
          { content: `Any news about ${word}?`, operatorId: big.operatorIds[0] },
        );
        if (posted.status !== 201) throw new Error(`POST messages: ${posted.status}`);
        postMs.push(posted.ms);
        const found = await searchable(big.apiKey, word, 30_000);
        lags.push(found - Date.parse(posted.body.createdAt));
      }
    }),
  );
  const lag = distribution(lags);
  say(`index lag p50 ${lag.p50.toFixed(0)} ms, p99 ${lag.p99.toFixed(0)} ms, max ${lag.max.toFixed(0)} ms`);

  // ── 4. queries ───────────────────────────────────────────────────────────────────────────────────
  const queryLoad = load();
  const results: SearchQueryResult[] = [];
  for (const query of QUERIES) {
    for (let i = 0; i < QUERY_WARMUP; i++) await search(big.apiKey, query.q, query.sort);
    const times: number[] = [];
    let total = 0;
    let capped = false;
    let hits = 0;
    const statuses = new Set<number>();
    for (let i = 0; i < QUERY_RUNS; i++) {
      const answer = await search(big.apiKey, query.q, query.sort);
      statuses.add(answer.status);
      times.push(answer.ms);
      total = answer.body.total;
      capped = answer.body.totalCapped === true;
      hits = answer.body.data?.length ?? 0;
    }
    const measured: SearchQueryResult = {
      ...query,
      ms: distribution(times),
      total,
      totalCapped: capped,
      hits,
      statuses: [...statuses],
    };
    results.push(measured);
    say(
      `${query.name} — q=${query.q}: p50 ${measured.ms.p50.toFixed(0)} ms, p99 ${measured.ms.p99.toFixed(0)} ms; total ${total}${capped ? '+' : ''}, ${hits} hits a page`,
    );
  }

  // ── 5. rebuild ───────────────────────────────────────────────────────────────────────────────────
  const rebuildMessages = Math.min(20_000, Math.max(2_000, Math.round(messages / 20)));
  const small = await tenant(`Search rebuild ${rebuildMessages}`);
  say(
    `rebuild: seeding ${rebuildMessages.toLocaleString('en')} messages into the table (the stream worker indexes them)…`,
  );
  const tableStart = Date.now();
  const inTable = await seedVolume({
    orgId: small.orgId,
    messages: rebuildMessages,
    conversations: Math.round(rebuildMessages / MESSAGES_PER_CONVERSATION) - 1,
    longConversationMessages: MESSAGES_PER_CONVERSATION,
    operatorIds: small.operatorIds,
    visitors: small.visitors,
    parallel: 8,
    progress: say,
  });
  const probe = await api<{ id: string }>('POST', '/api/conversations', small.apiKey, {
    visitorId: small.visitors[0]?.id,
    message: `catch-up ${sentinel}x`,
  });
  if (probe.status !== 201) throw new Error(`POST /api/conversations: ${probe.status}`);
  await searchable(small.apiKey, `${sentinel}x`, Math.max(120_000, rebuildMessages * 20));
  const streamIndexMs = Date.now() - tableStart;
  const countRows = async (orgId: string) =>
    Number(
      (
        await pool.query<{ n: string }>(
          `SELECT (SELECT count(*) FROM search_document WHERE org_id = $1 AND NOT deleted)
             + (SELECT count(*) FROM search_conversation WHERE org_id = $1) AS n`,
          [orgId],
        )
      ).rows[0]?.n ?? 0,
    );
  const rowsBefore = await countRows(small.orgId);
  say(`rebuilding that organization (--fresh) with rebuildIndex, as npm run search:reindex does…`);
  const rebuildLoad = load();
  const rebuildStart = Date.now();
  const rebuilt = await rebuildIndex({ orgIds: [small.orgId], fresh: true });
  const rebuildMs = Date.now() - rebuildStart;
  const rowsAfter = await countRows(small.orgId);
  say(
    `rebuilt ${rebuilt.conversations.toLocaleString('en')} conversations, ${rebuilt.rows.toLocaleString('en')} rows in ${(rebuildMs / 1000).toFixed(1)} s (rows in the index before ${rowsBefore}, after ${rowsAfter})`,
  );
  await closeSearchPool();
  await stack.stop();
  stack = undefined;
  return {
    messages: seeded.messages,
    conversations: seeded.conversations,
    seedRows: seeded.rows,
    seedMs: seeded.ms,
    tablePut: { conversations: items.length, ms: tablePutMs },
    streamCatchUpMs,
    vacuumMs,
    storage,
    lag,
    postMs: distribution(postMs),
    queries: results,
    rebuild: {
      messages: inTable.messages,
      conversations: rebuilt.conversations,
      rows: rebuilt.rows,
      ms: rebuildMs,
      rowsBefore,
      rowsAfter,
      tableSeedMs: inTable.ms,
      streamIndexMs,
    },
    load: { start: loadAtStart, lag: lagLoad, queries: queryLoad, rebuild: rebuildLoad, end: load() },
  };
}

let exitCode = 0;
try {
  const result = await main();
  console.log(`${RESULT_MARKER}${JSON.stringify(result)}`);
  if (process.argv.includes('--report')) {
    const verdicts: Verdict[] = [];
    reportSearch(result, verdicts);
    const misses = verdicts.filter((verdict) => !verdict.ok);
    console.log('');
    for (const miss of misses) console.log(`  ${MISS} ${miss.what}: ${miss.detail}`);
    console.log(
      `${misses.length ? MISS : PASS} search: ${verdicts.length - misses.length}/${verdicts.length} targets met`,
    );
  }
} catch (error) {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  exitCode = 1;
} finally {
  await stack?.stop().catch(() => undefined);
}
process.exit(exitCode);
