/**
 * Mirror the organization's events feed into a file, one JSON event per line, resumable.
 *
 *   BASE_URL=http://localhost:3000 API_KEY=svc_sk_… npx tsx examples/mirror-events.ts events.ndjson [--follow]
 *
 * Appends every event after the last one mirrored (the cursor is kept in `<file>.cursor`), stops at
 * the current end of the feed, or with `--follow` keeps polling every 5 s until interrupted.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServiceClient } from '../clients/typescript/src/index.js';

const [file, ...flags] = process.argv.slice(2);
if (!file || file.startsWith('-')) {
  console.error(
    'usage: mirror-events.ts <file.ndjson> [--follow]  (BASE_URL and API_KEY in the environment)',
  );
  process.exit(2);
}
const follow = flags.includes('--follow');
const { BASE_URL: baseUrl, API_KEY: apiKey } = process.env;
if (!baseUrl || !apiKey) throw new Error('BASE_URL and API_KEY must be set');

const api = createServiceClient({ baseUrl, apiKey });
const cursorFile = `${file}.cursor`;
let cursor = existsSync(cursorFile) ? readFileSync(cursorFile, 'utf8').trim() : undefined;

let stopping = false;
process.on('SIGINT', () => {
  stopping = true;
});

do {
  let mirrored = 0;
  // One page at a time: the cursor is saved only after its events are in the file.
  for (;;) {
    const page = await api.GET('/api/events', {
      params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } },
    });
    if (!page.data) throw new Error(`read the feed: ${page.response.status} ${JSON.stringify(page.error)}`);
    const lines = page.data.data.map((event) => `${JSON.stringify(event)}\n`).join('');
    if (lines) appendFileSync(file, lines);
    mirrored += page.data.data.length;
    if (page.data.nextCursor) {
      cursor = page.data.nextCursor;
      writeFileSync(cursorFile, cursor);
    }
    if (page.data.done || !page.data.nextCursor) break;
  }
  console.log(`mirrored ${mirrored} event(s) into ${file}`);
  if (follow && !stopping) await new Promise((resolve) => setTimeout(resolve, 5_000));
} while (follow && !stopping);
