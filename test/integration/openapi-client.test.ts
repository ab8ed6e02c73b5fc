import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTenant, createVisitor } from '../helpers/api';

/**
 * The served OpenAPI document is good enough for a typed client, as stock tools make one: types
 * from openapi-typescript, the openapi-fetch client, and the program an integrator would write
 * (test/openapi/client-program.ts). The program must compile under `tsc --strict` without a cast,
 * and do what it says against the running stack.
 */

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const template = join(repoRoot, 'test/openapi/client-program.ts');
const bin = (name: string): string => join(repoRoot, 'node_modules', '.bin', name);

interface Run {
  exitCode: number;
  stdout: string;
  stderr: string;
}

function run(
  file: string,
  args: readonly string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { cwd, timeout: 60_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        if (error && (error.killed || typeof error.code !== 'number')) {
          reject(new Error(`${file} ${args.join(' ')}: ${error.message}\n${stdout}\n${stderr}`));
          return;
        }
        resolve({ exitCode: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
      },
    );
  });
}

interface Summary {
  created: { status: number; id: string; version: number; etag: string };
  message: { status: number; id: string; senderType: string; senderId: string };
  patched: { status: number; version: number; etag: string | null };
  stale: { status: number; code: string; currentVersion: number };
  messages: { pages: number; ids: string[]; messageCount: number };
}

describe('a typed client generated from GET /api/openapi.json', () => {
  let dir: string;

  beforeAll(async () => {
    const response = await fetch(`${inject('baseUrl')}/api/openapi.json`);
    expect(response.status).toBe(200);
    // The JSON text as served (openapi-typescript parses a string that starts with `{` as JSON).
    const document = await response.text();
    dir = await mkdtemp(join(tmpdir(), 'openapi-client-'));
    await writeFile(join(dir, 'api.d.ts'), astToString(await openapiTS(document, { silent: true })));
    // The program with its first line (the `@ts-nocheck` that keeps the repository's typecheck off
    // it) blanked: diagnostics keep the template's line numbers.
    const program = (await readFile(template, 'utf8')).replace(/^\/\/ @ts-nocheck[^\n]*/, '');
    await writeFile(join(dir, 'program.ts'), program);
    // An ES module package that resolves openapi-fetch, @types/node and tsx from this repository.
    await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    await symlink(join(repoRoot, 'node_modules'), join(dir, 'node_modules'), 'dir');
  }, 60_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('has a client program that types everything through the document: no cast, no escape hatch', async () => {
    const code = (await readFile(join(dir, 'program.ts'), 'utf8'))
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|[^:])\/\/.*$/gm, '$1');
    const escapes = code
      .split('\n')
      .map((line, index) => `${index + 1}: ${line.trim()}`)
      .filter((line) => /\bas (?!const\b)|[\w\])]!(?=[.;,)[])|\bany\b|@ts-|\beval\b/.test(line));
    expect(escapes, 'casts, non-null assertions, any or @ts- comments in the client program').toEqual([]);
  });

  it('compiles the client program under tsc --strict with no diagnostic', async () => {
    const compiled = await run(
      bin('tsc'),
      [
        '--strict',
        '--noEmit',
        '--skipLibCheck',
        '--target',
        'es2022',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--types',
        'node',
        '--pretty',
        'false',
        'program.ts',
      ],
      dir,
    );
    const diagnostics = `${compiled.stdout}${compiled.stderr}`.trim();
    expect(diagnostics, `tsc --strict on the client program:\n${diagnostics}`).toBe('');
    expect(compiled.exitCode).toBe(0);
  }, 60_000);

  it('creates, answers, updates with If-Match, meets a 412 and pages the messages', async () => {
    const tenant = await createTenant();
    const visitor = await createVisitor(tenant.widgetKey, { identifier: 'ada@example.com' });
    // The program's own answers are held to the served document too, in its own process.
    const conformance = join(repoRoot, 'test/helpers/response-conformance.register.ts');
    const result = await run(bin('tsx'), ['--import', conformance, 'program.ts'], dir, {
      BASE_URL: inject('baseUrl'),
      CONFORMANCE_BASE_URL: inject('baseUrl'),
      API_KEY: tenant.apiKey,
      VISITOR_ID: visitor.visitor.id,
      OPERATOR_ID: tenant.operatorId,
    });
    expect(result.exitCode, `the client program failed:\n${result.stderr}${result.stdout}`).toBe(0);
    const lastLine = result.stdout.trim().split('\n').at(-1) ?? '';
    const summary = JSON.parse(lastLine) as Summary;

    expect(summary.created.status).toBe(201);
    expect(summary.created.etag).toBe(`"${summary.created.version}"`);

    expect(summary.message.status).toBe(201);
    expect(summary.message.senderType).toBe('operator');
    expect(summary.message.senderId).toBe(tenant.operatorId);

    expect(summary.patched.status).toBe(200);
    expect(summary.patched.version).toBe(summary.created.version + 1);
    expect(summary.patched.etag).toBe(`"${summary.patched.version}"`);
    expect(summary.patched.etag).not.toBe(summary.created.etag);

    expect(summary.stale).toEqual({
      status: 412,
      code: 'PRECONDITION_FAILED',
      currentVersion: summary.patched.version,
    });

    // The first message and the operator's answer, each once, newest first, one page each.
    expect(summary.messages.messageCount).toBe(2);
    expect(summary.messages.ids).toHaveLength(2);
    expect(summary.messages.ids[0]).toBe(summary.message.id);
    expect(new Set(summary.messages.ids).size).toBe(2);
    expect(summary.messages.pages).toBeGreaterThanOrEqual(2);
  }, 60_000);
});
