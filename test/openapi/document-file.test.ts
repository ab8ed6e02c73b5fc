import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import {
  CLIENT_SCHEMA_FILE,
  clientSchemaText,
  OPENAPI_FILE,
  openApiFileText,
} from '../../infra/openapi-export';

/**
 * The committed `openapi.json` and the client's generated types are what this checkout serves, so a
 * change of the API shows in the diff a reviewer reads. Stale files: run `npm run openapi:export`.
 */
describe('the committed OpenAPI document', () => {
  it('is the document this checkout builds, and the client types are generated from it', async () => {
    const expected = openApiFileText();
    expect(
      (await readFile(OPENAPI_FILE, 'utf8')) === expected,
      'openapi.json is stale: npm run openapi:export',
    ).toBe(true);
    expect(
      (await readFile(CLIENT_SCHEMA_FILE, 'utf8')) === (await clientSchemaText(expected)),
      'clients/typescript/src/schema.d.ts is stale: npm run openapi:export',
    ).toBe(true);
  }, 60_000);

  it('declares the license the package carries', async () => {
    const manifest = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
      license: string;
    };
    const document = JSON.parse(await readFile(OPENAPI_FILE, 'utf8')) as {
      info: { license: { identifier: string } };
    };
    expect(document.info.license.identifier).toBe(manifest.license);
  });
});
