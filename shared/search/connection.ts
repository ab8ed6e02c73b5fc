import { readFileSync } from 'node:fs';
import pg from 'pg';

/**
 * The search index's PostgreSQL connection: the same driver (`pg`) and SQL in AWS, locally and in
 * the tests (docs/decisions.md, "Search engine").
 *
 * - `SEARCH_DATABASE_URL` (local stack, tests, bench): a plain `postgres://user:password@host:port/db`.
 * - In AWS: `SEARCH_DB_HOST`, `SEARCH_DB_PORT`, `SEARCH_DB_NAME`, `SEARCH_DB_USER`, with IAM database
 *   authentication: the password is a 15-minute token signed with the function's role (no secret to
 *   read, no network call to mint it), over TLS with the server's certificate verified (`auroraTls`).
 *
 * One connection per Lambda instance (an instance serves one request at a time), so the database's
 * connection limit bounds the functions' reserved concurrency, not the traffic.
 */
let pool: pg.Pool | undefined;

/**
 * Where the Lambda Node.js runtime keeps Amazon's certificate authorities, RDS's among them. Since
 * Node.js 20 it does not load them by default (they slow every cold start); `NODE_EXTRA_CA_CERTS`
 * would load them into every function, so only a connection to the index reads them.
 * `SEARCH_DB_CA_FILE` names another bundle (e.g. RDS's global-bundle.pem) where that file is absent.
 */
export const LAMBDA_CA_FILE = '/var/runtime/ca-cert.pem';

/**
 * TLS to Aurora with the server's certificate checked against Amazon's authorities (and its name
 * against the host, as Node does by default): an IAM token sent to an unverified server could be
 * replayed against the cluster for its 15 minutes. Read when the first connection is configured,
 * not at module load.
 */
export function auroraTls(): { ca: string; rejectUnauthorized: true } {
  const file = process.env.SEARCH_DB_CA_FILE || LAMBDA_CA_FILE;
  let ca: string;
  try {
    ca = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(
      `The certificate authorities to verify the search database with were not read from ${file} (set SEARCH_DB_CA_FILE): ${(error as Error).message}`,
    );
  }
  return { ca, rejectUnauthorized: true };
}

function poolConfig(): pg.PoolConfig {
  const env = process.env;
  const url = env.SEARCH_DATABASE_URL;
  const max = Number(env.SEARCH_DB_POOL_MAX ?? 1);
  if (url) return { connectionString: url, max, idleTimeoutMillis: 60_000 };
  const host = env.SEARCH_DB_HOST;
  const user = env.SEARCH_DB_USER;
  if (!host || !user)
    throw new Error('The search index is not configured: set SEARCH_DATABASE_URL or SEARCH_DB_HOST');
  const port = Number(env.SEARCH_DB_PORT ?? 5432);
  let signer: Promise<{ getAuthToken(): Promise<string> }> | undefined;
  return {
    host,
    port,
    user,
    database: env.SEARCH_DB_NAME ?? 'search',
    max,
    // Loaded only where IAM authentication is used: the local stack never needs the signer.
    password: async () => {
      signer ??= import('@aws-sdk/rds-signer').then(
        ({ Signer }) => new Signer({ hostname: host, port, username: user, region: env.AWS_REGION }),
      );
      return (await signer).getAuthToken();
    },
    ssl: auroraTls(),
    idleTimeoutMillis: 0,
    connectionTimeoutMillis: 20_000,
  };
}

/** The process's pool, created on first use. */
export function searchPool(): pg.Pool {
  if (!pool) {
    pool = new pg.Pool(poolConfig());
    // An idle connection dropped by the server (a paused cluster, a restart) is replaced on next use.
    pool.on('error', () => undefined);
  }
  return pool;
}

/** Closes the pool (scripts, tests). */
export async function closeSearchPool(): Promise<void> {
  const current = pool;
  pool = undefined;
  await current?.end();
}
