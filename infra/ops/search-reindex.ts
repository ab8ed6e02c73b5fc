import { useLocalStackEnvironment } from '../local/stack-state';

const HELP = `npm run search:reindex -- [--org <id>]... [--fresh]

Rebuilds the search index (PostgreSQL) from the table, the system of record: each organization's
settings, conversations, messages and notes, through the same projection and writer as the stream
worker (rows already newer are kept, so the service may keep running). Prints progress.

  --org <id>   only this organization (repeatable); default: every organization
  --fresh      first drop the organization's rows (texts deleted since are then gone for sure)

Where: the running local stack (.local-data/local-stack.json from npm start), or the environment:
TABLE_NAME, AWS_ENDPOINT_URL_DYNAMODB (or AWS credentials and region), and SEARCH_DATABASE_URL or
SEARCH_DB_HOST/SEARCH_DB_PORT/SEARCH_DB_NAME/SEARCH_DB_USER (IAM authentication, from inside the VPC;
outside Lambda, SEARCH_DB_CA_FILE names the RDS certificate bundle the server is verified against,
e.g. global-bundle.pem from https://truststore.pki.rds.amazonaws.com).`;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(HELP);
    return;
  }
  const orgIds: string[] = [];
  let fresh = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--org' && args[i + 1]) orgIds.push(String(args[++i]));
    else if (arg === '--fresh') fresh = true;
    else throw new Error(`Unknown argument ${arg}\n\n${HELP}`);
  }
  useLocalStackEnvironment();
  // Imported only now: the data layer reads its configuration at load.
  const { rebuildIndex } = await import('../../shared/search/rebuild');
  const { closeSearchPool } = await import('../../shared/search/connection');
  const t0 = Date.now();
  const seconds = () => ((Date.now() - t0) / 1000).toFixed(1);
  const done = await rebuildIndex({
    ...(orgIds.length > 0 && { orgIds }),
    fresh,
    onProgress: (progress, orgId) =>
      console.log(
        `[${seconds()}s] organization ${orgId}: ${progress.conversations} conversations, ${progress.rows} rows written (${progress.organizations} organizations done)`,
      ),
  });
  console.log(
    `Rebuilt in ${seconds()} s: ${done.organizations} organizations, ${done.conversations} conversations, ${done.rows} rows`,
  );
  await closeSearchPool();
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
