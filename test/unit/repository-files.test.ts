import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

/** The files contributors and integrators expect say the same things as the code. */

const read = (path: string) => readFile(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('repository files', () => {
  it('license: Apache-2.0 in LICENSE, package.json, the client package and the OpenAPI document', async () => {
    expect(await read('LICENSE')).toMatch(/Apache License\s+Version 2\.0/);
    const manifest = JSON.parse(await read('package.json')) as { license: string };
    const client = JSON.parse(await read('clients/typescript/package.json')) as { license: string };
    const document = JSON.parse(await read('openapi.json')) as { info: { license: { identifier: string } } };
    expect(manifest.license).toBe('Apache-2.0');
    expect(client.license).toBe('Apache-2.0');
    expect(document.info.license.identifier).toBe('Apache-2.0');
  });

  it('.env.example lists every variable of the environment table of docs/local.md', async () => {
    const local = await read('docs/local.md');
    const start = local.indexOf('## Environment');
    const table = local.slice(start, local.indexOf('\n## ', start + 1));
    const names = new Set<string>();
    for (const row of table.split('\n').filter((line) => line.startsWith('| `'))) {
      const cell = row.split('|')[1] ?? '';
      const [first = ''] = [...cell.matchAll(/`([A-Z0-9_]+)`/g)].map((match) => match[1] ?? '');
      for (const match of cell.matchAll(/`([A-Z0-9_]+)`/g)) {
        const name = match[1] ?? '';
        // `AWS_ENDPOINT_URL_DYNAMODB`, `_SQS`: a suffix names a variable with the first one's prefix.
        names.add(name.startsWith('_') ? first.replace(/_[A-Z0-9]+$/, '') + name : name);
      }
    }
    expect(names.size).toBeGreaterThan(10);
    const example = await read('.env.example');
    const missing = [...names].filter((name) => !new RegExp(`^#? ?${name}=`, 'm').test(example));
    expect(missing).toEqual([]);
  });

  it('.nvmrc, engines and the CI workflow agree on the Node floor', async () => {
    const manifest = JSON.parse(await read('package.json')) as { engines: { node: string } };
    const floor = (await read('.nvmrc')).trim();
    expect(manifest.engines.node).toBe(`>=${floor}`);
    const workflow = await read('.github/workflows/ci.yml');
    expect(workflow).toMatch(/node-version-file: \.nvmrc/);
    expect(workflow).toMatch(/run: \.ci\/run/);
  });

  it('CHANGELOG.md follows Keep a Changelog with an Unreleased section', async () => {
    const changelog = await read('CHANGELOG.md');
    expect(changelog).toMatch(/keepachangelog\.com/);
    expect(changelog).toMatch(/^## \[Unreleased\]$/m);
  });
});
