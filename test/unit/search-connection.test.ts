import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { closeSearchPool, searchPool } from '../../shared/search/connection';

/** How a function in AWS connects to the search index: IAM token, TLS with the server verified. */
describe('the search index connection in AWS', () => {
  const dir = mkdtempSync(join(tmpdir(), 'search-ca-'));
  const bundle = join(dir, 'ca.pem');
  writeFileSync(bundle, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');

  beforeEach(() => {
    vi.stubEnv('SEARCH_DATABASE_URL', '');
    vi.stubEnv('SEARCH_DB_HOST', 'index.cluster-example.eu-west-1.rds.amazonaws.com');
    vi.stubEnv('SEARCH_DB_USER', 'search_app');
  });
  afterEach(async () => {
    await closeSearchPool();
    vi.unstubAllEnvs();
  });

  it("verifies the server's certificate against the authorities of the bundle", () => {
    vi.stubEnv('SEARCH_DB_CA_FILE', bundle);
    const { ssl } = searchPool().options as { ssl?: { ca?: string; rejectUnauthorized?: boolean } };
    expect(ssl?.rejectUnauthorized).toBe(true);
    expect(ssl?.ca).toContain('BEGIN CERTIFICATE');
  });

  it('refuses to connect unverified when the bundle cannot be read, naming it', () => {
    vi.stubEnv('SEARCH_DB_CA_FILE', join(dir, 'missing.pem'));
    expect(() => searchPool()).toThrow(/missing\.pem.*SEARCH_DB_CA_FILE/);
  });
});
