import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import pg from 'pg';
import { auroraTls } from '../../shared/search/connection';
import { migrate } from '../../shared/search/schema';
import { getSecretString } from '../../shared/secrets';

/**
 * The search index's schema in AWS (a custom resource of each deployment): the same statements as
 * the local stack runs, then the login role the functions connect as with IAM authentication
 * (`rds_iam`: no password), owning nothing, granted exactly the rows' reads and writes.
 */
export const handler = async (event: CloudFormationCustomResourceEvent) => {
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId };
  const secret = JSON.parse(await getSecretString(String(process.env.SEARCH_DB_ADMIN_SECRET_ARN))) as {
    host: string;
    port: number;
    username: string;
    password: string;
    dbname?: string;
  };
  const role = String(process.env.SEARCH_DB_USER);
  const client = new pg.Client({
    host: secret.host,
    port: secret.port,
    user: secret.username,
    password: secret.password,
    database: process.env.SEARCH_DB_NAME ?? 'search',
    ssl: auroraTls(),
    connectionTimeoutMillis: 60_000,
  });
  await client.connect();
  try {
    await migrate(client);
    const quoted = `"${role.replaceAll('"', '""')}"`;
    await client.query(`DO $$ BEGIN
      IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${role.replaceAll("'", "''")}') THEN
        CREATE ROLE ${quoted} LOGIN;
      END IF;
    END $$`);
    await client.query(`GRANT rds_iam TO ${quoted}`);
    await client.query(
      `GRANT SELECT, INSERT, UPDATE ON search_org, search_conversation, search_document TO ${quoted}`,
    );
  } finally {
    await client.end();
  }
  return { PhysicalResourceId: `search-schema-${role}` };
};
