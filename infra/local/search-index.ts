import pg from 'pg';
import { migrate } from '../../shared/search/schema';

/** Creates the search index's tables (idempotent) on the local server, or on one you run. */
export async function prepareSearchIndex(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await migrate(client);
  } finally {
    await client.end();
  }
}
