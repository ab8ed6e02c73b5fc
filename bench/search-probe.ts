/**
 * Search query cost without the HTTP path and without DynamoDB: a persistent embedded PostgreSQL
 * (`--data=<dir>`, default `.search-probe`), seeded once with `--messages` (default 1,000,000) by
 * the stream worker's projection and writer (search-seed.ts), then each phase-8 query timed through
 * `search()` itself. A second run reuses the data (the seed takes ~20 minutes at 1M on 2 busy
 * cores). `npx tsx bench/search-probe.ts --messages=1000000 [--runs=10]`; prints the load.
 */
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { startPostgres } from '../infra/local/emulators';

const arg = (name: string, fallback: string) =>
  process.argv.find((value) => value.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const messages = Number(arg('messages', '1000000').replaceAll('_', ''));
const runs = Number(arg('runs', '10'));
const orgId = `probe-${messages}`;
const server = await startPostgres(resolve(arg('data', '.search-probe')));
process.env.SEARCH_DATABASE_URL = server.endpoint;
process.env.SEARCH_DB_POOL_MAX = '3';
const { searchPool, closeSearchPool } = await import('../shared/search/connection');
const { migrate } = await import('../shared/search/schema');
const { writeRows } = await import('../shared/search/writer');
const { search } = await import('../shared/search/search');
const { seedSearchVolume } = await import('./search-seed');
const pool = searchPool();
const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
try {
  await migrate(pool);
  const { rows } = await pool.query('SELECT 1 FROM search_org WHERE org_id = $1', [orgId]);
  if (rows.length === 0) {
    await writeRows(pool, [{ table: 'org', orgId, config: 'search_english', version: '1' }]);
    const visitors = Array.from({ length: 50 }, (_, i) => ({
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    })) as never[];
    const operatorIds = Array.from(
      { length: 10 },
      (_, i) => `00000000-0000-4000-9000-${String(i).padStart(12, '0')}`,
    );
    const seeded = await seedSearchVolume({
      orgId,
      messages,
      conversations: messages / 10,
      visitors,
      operatorIds,
      pool,
      parallel: 2,
      progress: console.log,
    });
    console.log(`seeded ${seeded.messages} messages in ${(seeded.ms / 1000).toFixed(0)} s`);
    await pool.query('VACUUM ANALYZE search_document');
    await pool.query('VACUUM ANALYZE search_conversation');
  }
  const queries: [string, string, ('newest' | undefined)?][] = [
    ['common word (relevance)', 'refund'],
    ['rare word', 'neloju'],
    ['phrase', '"tracking number"'],
    ['filtered', 'refund status:open tag:vip'],
    ['filters only', 'status:open priority:high', 'newest'],
    ['common word, newest', 'refund', 'newest'],
  ];
  console.log(`load ${load()}`);
  for (const [name, q, sort] of queries) {
    const times: number[] = [];
    let total = 0;
    for (let i = 0; i <= runs; i++) {
      const t0 = performance.now();
      total = (await search({ orgId, q, sort, limit: 20 })).total;
      if (i > 0) times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    console.log(
      `${name.padEnd(26)} p50 ${times[Math.floor(times.length / 2)]?.toFixed(0)} ms, max ${times.at(-1)?.toFixed(0)} ms; total ${total}`,
    );
  }
  console.log(`load ${load()}`);
} finally {
  await closeSearchPool();
  await server.stop();
}
