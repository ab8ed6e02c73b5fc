import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function sourceFiles(folder: string): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every module a file names (static, dynamic, type-only and bare imports, and re-exports). */
function specifiersOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"]([^'"]+)['"]/g)].map(
    (match) => match[1] ?? '',
  );
}

/** A relative specifier as a repository path. */
function resolveFrom(file: string, specifier: string): string {
  const base = join(dirname(file), specifier);
  const candidates = [`${base}.ts`, join(base, 'index.ts'), base];
  return relative('.', candidates.find((path) => existsSync(join(root, path))) ?? base);
}

/** Relative imports of a module, as repository paths. */
function importsOf(file: string): string[] {
  return specifiersOf(file)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => resolveFrom(file, specifier));
}

const graph = new Map(
  [...sourceFiles('shared'), ...sourceFiles('functions')].map((file) => [file, importsOf(file)]),
);

/** Every module `file` loads, directly or not, with the chain that reaches each. */
function reach(file: string): Map<string, string[]> {
  const chains = new Map<string, string[]>([[file, [file]]]);
  const queue = [file];
  while (queue.length) {
    const current = queue.shift() ?? '';
    for (const next of graph.get(current) ?? []) {
      if (chains.has(next)) continue;
      chains.set(next, [...(chains.get(current) ?? []), next]);
      queue.push(next);
    }
  }
  return chains;
}

describe('layering', () => {
  it('keeps storage, domain modules and workers free of the HTTP layer', () => {
    const neutral = [...graph.keys()].filter(
      (file) =>
        (file.startsWith('shared/') && !file.startsWith('shared/http/')) ||
        file.startsWith('functions/workers/'),
    );
    const leaks = neutral.flatMap((file) =>
      [...reach(file)]
        .filter(([module]) => module.startsWith('shared/http/'))
        .map(([, chain]) => chain.join(' → ')),
    );
    expect(neutral.length).toBeGreaterThan(40);
    expect(leaks).toEqual([]);
  });

  it('leaves DynamoDB to the data layer: functions name no table, key or AWS SDK module', () => {
    // Handlers and workers call entity modules (shared/db/<entity>.ts); the client, the key builders
    // and the SDK stay behind them, so one module per entity reads and writes it.
    const forbidden = (file: string, specifier: string) =>
      specifier.startsWith('@aws-sdk/') ||
      (specifier.startsWith('.') &&
        ['shared/db/client.ts', 'shared/db/keys.ts'].includes(resolveFrom(file, specifier)));
    const functions = [...graph.keys()].filter((file) => file.startsWith('functions/'));
    const offenders = functions.flatMap((file) =>
      specifiersOf(file)
        .filter((specifier) => forbidden(file, specifier))
        .map((specifier) => `${file} imports ${specifier}`),
    );
    expect(functions.length).toBeGreaterThan(80);
    expect(offenders).toEqual([]);
  });

  it('sends every transaction through one write path (shared/db/transaction.ts)', () => {
    // There a transaction gets its request token, its retries within the request's budget and its
    // 503 when AWS keeps cancelling it; a TransactWriteCommand sent elsewhere would answer 500.
    const offenders = [...graph.keys()].filter(
      (file) =>
        file !== 'shared/db/transaction.ts' &&
        /\bTransactWrite(?:Items)?Command\(/.test(readFileSync(join(root, file), 'utf8')),
    );
    expect(offenders).toEqual([]);
  });

  it('leaves transactions to the data layer: no function imports shared/db/transaction.ts', () => {
    // What a change implies (events, audit entries, counters, team load) is decided in the data layer
    // (shared/db/conversation-implications.ts), so a change means the same whichever handler makes
    // it; handlers call intent-level functions and never assemble actions, transact or retry.
    const functions = [...graph.keys()].filter((file) => file.startsWith('functions/'));
    const offenders = functions.flatMap((file) =>
      specifiersOf(file)
        .filter(
          (specifier) =>
            specifier.startsWith('.') && resolveFrom(file, specifier) === 'shared/db/transaction.ts',
        )
        .map((specifier) => `${file} imports ${specifier}`),
    );
    expect(functions.length).toBeGreaterThan(80);
    expect(offenders).toEqual([]);
  });

  it('keeps what costs a function its cold start out of module load', () => {
    // On Node 22 an ES import of node:http loads undici (its WebSocket getters are read when the
    // module's exports are bound), and a first toLocaleString initialises ICU: ~15 ms each of a
    // function's cold import (docs/decisions.md, "node:http and ICU at import").
    const valueImportOfHttp = /^import\s+(?!type\b)[^;]*?from\s+['"](?:node:)?http['"]/m;
    const offenders = [...graph.keys()].flatMap((file) => {
      const text = readFileSync(join(root, file), 'utf8');
      return [
        ...(valueImportOfHttp.test(text) ? [`${file}: ES import of node:http`] : []),
        ...(text.includes('.toLocaleString(') ? [`${file}: toLocaleString (use shared/thousands.ts)`] : []),
      ];
    });
    expect(offenders).toEqual([]);
  });

  it('has no import cycle', () => {
    const cycles = [...graph.keys()].flatMap((file) =>
      (graph.get(file) ?? [])
        .filter((next) => reach(next).has(file))
        .map((next) => [...(reach(next).get(file) ?? []), `(from ${file})`].join(' → ')),
    );
    expect(cycles).toEqual([]);
  });
});
