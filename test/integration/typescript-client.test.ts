import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  API_VERSION,
  createServiceClient,
  ifMatch,
  retryAfterMs,
  ServiceApiError,
  verifyWebhook,
} from '../../clients/typescript/src/index';
import { createTenant, createVisitor, type Tenant } from '../helpers/api';
import { eventually } from '../helpers/eventually';

/**
 * The typed client (`clients/typescript`) against the local stack, as an integrator uses it, and the
 * programs of `examples/` run the way their comments say.
 */

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const tsx = join(repoRoot, 'node_modules/.bin/tsx');

let tenant: Tenant;
let visitor: { token: string; visitor: { id: string } };
let scratch: string;

beforeAll(async () => {
  tenant = await createTenant();
  visitor = await createVisitor(tenant.widgetKey);
  scratch = await mkdtemp(join(tmpdir(), 'client-examples-'));
});

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** A fetch that records what the client sends, and may answer the first few requests itself. */
function recordingFetch(canned: Response[] = []) {
  const sent: Request[] = [];
  return {
    sent,
    fetch: async (request: Request) => {
      sent.push(request.clone());
      return canned.shift() ?? globalThis.fetch(request);
    },
  };
}

describe('the committed openapi.json', () => {
  it('is exactly the document the running service serves, but for the server it names', async () => {
    type Document = { servers: { url: string; variables?: Record<string, { default: string }> }[] };
    const { servers: servedFrom, ...served } = (await (
      await fetch(`${inject('baseUrl')}/api/openapi.json`)
    ).json()) as Document;
    const { servers: template, ...committed } = JSON.parse(
      await readFile(join(repoRoot, 'openapi.json'), 'utf8'),
    ) as Document;
    expect(served).toEqual(committed);
    // The file names a server to fill in (the local stack by default); a deployment names itself.
    expect(template[0]?.variables?.baseUrl?.default).toBe('http://localhost:3000');
    expect(servedFrom).toEqual([
      { url: inject('baseUrl').replace(/\/+$/, ''), description: expect.any(String) },
    ]);
  });
});

describe('the typed client', () => {
  it('sends the API key, an Idempotency-Key on every POST (kept across retries), none on GET', async () => {
    const recorder = recordingFetch([
      new Response('{}', { status: 503, headers: { 'Retry-After': '0' } }),
      new Response('{}', { status: 429, headers: { 'Retry-After': '0' } }),
    ]);
    const api = createServiceClient({
      baseUrl: inject('baseUrl'),
      apiKey: tenant.apiKey,
      fetch: recorder.fetch,
    });
    const created = await api.POST('/api/conversations', {
      body: { visitorId: visitor.visitor.id, message: 'Where is my order?' },
    });
    expect(created.response.status).toBe(201);
    const keys = recorder.sent.map((request) => request.headers.get('idempotency-key'));
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(recorder.sent[0]?.headers.get('x-api-key')).toBe(tenant.apiKey);
    expect(recorder.sent[0]?.headers.get('authorization')).toBeNull();

    const read = await api.GET('/api/conversations/{id}', {
      params: { path: { id: created.data?.id ?? '' } },
    });
    expect(read.data?.id).toBe(created.data?.id);
    expect(recorder.sent.at(-1)?.headers.get('idempotency-key')).toBeNull();
  });

  it('gives up after its retries with the last answer, and waits what Retry-After says', async () => {
    const busy = () =>
      new Response('{"error":{"code":"SERVICE_UNAVAILABLE"}}', {
        status: 503,
        headers: { 'Retry-After': '0' },
      });
    const recorder = recordingFetch([busy(), busy(), busy()]);
    const api = createServiceClient({
      baseUrl: inject('baseUrl'),
      apiKey: tenant.apiKey,
      fetch: recorder.fetch,
      maxRetries: 2,
    });
    const answer = await api.GET('/api/conversations', {});
    expect(answer.response.status).toBe(503);
    expect(recorder.sent).toHaveLength(3);
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs(new Date(Date.now() + 3000).toUTCString(), Date.now())).toBeGreaterThan(1000);
    expect(retryAfterMs(null)).toBeUndefined();
  });

  it('writes with If-Match from the resource, and a stale one is a typed 412', async () => {
    const api = createServiceClient({
      baseUrl: inject('baseUrl'),
      apiKey: tenant.apiKey,
      apiKeyHeader: 'authorization',
    });
    const created = await api.POST('/api/conversations', {
      body: { visitorId: visitor.visitor.id, message: 'Hi' },
    });
    const conversation = created.data;
    if (!conversation) throw new Error(`create: ${created.response.status}`);
    const patched = await api.PATCH('/api/conversations/{id}', {
      params: { path: { id: conversation.id }, header: ifMatch(conversation) },
      body: { priority: 'high' },
    });
    expect(patched.data?.version).toBe(conversation.version + 1);
    const stale = await api.PATCH('/api/conversations/{id}', {
      params: { path: { id: conversation.id }, header: ifMatch(conversation) },
      body: { priority: 'low' },
    });
    expect(stale.response.status).toBe(412);
    expect(stale.error?.error.code).toBe('PRECONDITION_FAILED');
  });

  it('reads the events feed as typed events: narrowed on `type`, `data` is that resource', async () => {
    const owner = await createTenant();
    const api = createServiceClient({ baseUrl: inject('baseUrl'), apiKey: owner.apiKey });
    const { visitor: someone } = await createVisitor(owner.widgetKey);
    const created = await api.POST('/api/conversations', {
      body: { visitorId: someone.id, message: 'Where is my order?', title: 'Order' },
    });
    expect(created.response.status).toBe(201);

    // The feed serves an event once it is 2 s old.
    const page = await eventually(
      () => api.GET('/api/events', { params: { query: { limit: 50 } } }),
      (answer) => (answer.data?.data.length ?? 0) >= 2,
      { timeoutMs: 10_000, intervalMs: 250 },
    );
    const seen: string[] = [];
    for (const event of page.data?.data ?? []) {
      // These lines compile only because each entry's `data` is typed by its `type`.
      if (event.type === 'conversation.created') seen.push(`${event.type}: ${event.data.title}`);
      if (event.type === 'message.created') seen.push(`${event.type}: ${event.data.content}`);
    }
    expect(seen.sort()).toEqual(['conversation.created: Order', 'message.created: Where is my order?']);
  });

  it('iterates every item of a cursor listing and of an offset listing', async () => {
    const api = createServiceClient({ baseUrl: inject('baseUrl'), apiKey: tenant.apiKey });
    const created = await api.POST('/api/conversations', {
      body: { visitorId: visitor.visitor.id, message: 'm0' },
    });
    const id = created.data?.id ?? '';
    for (let n = 1; n < 23; n++)
      await api.POST('/api/conversations/{id}/messages', {
        params: { path: { id } },
        body: { content: `m${n}`, operatorId: tenant.operatorId },
      });
    const contents: string[] = [];
    for await (const message of api.paginate('/api/conversations/{id}/messages', {
      params: { path: { id }, query: { limit: 5 } },
    }))
      contents.push(message.content);
    expect(contents).toHaveLength(23);
    expect(new Set(contents).size).toBe(23);

    // Targets the local stack admits over plain HTTP (no receiver needed: nothing is delivered).
    const target = `http://127.0.0.1:${inject('webhookTestPorts')[3]}`;
    for (const n of [1, 2, 3]) {
      const hook = await api.POST('/api/webhooks', {
        body: { url: `${target}/client-${n}`, events: ['note.created'] },
      });
      expect(hook.response.status).toBe(201);
    }
    const urls: string[] = [];
    for await (const webhook of api.paginateOffset('/api/webhooks', { limit: 2 })) urls.push(webhook.url);
    expect(urls.sort()).toEqual([1, 2, 3].map((n) => `${target}/client-${n}`));

    // A page that answers an error ends the iteration with it.
    const missing = async () => {
      for await (const _ of api.paginate('/api/conversations/{id}/messages', {
        params: { path: { id: randomUUID() } },
      }))
        break;
    };
    await expect(missing()).rejects.toMatchObject({ status: 404 });
    await expect(missing()).rejects.toBeInstanceOf(ServiceApiError);
  });

  it('refuses two credentials at once, as the API would', () => {
    expect(() =>
      createServiceClient({ baseUrl: inject('baseUrl'), apiKey: tenant.apiKey, token: visitor.token }),
    ).toThrow(/either apiKey or token/);
  });

  it('verifies a webhook signed by the service and refuses a tampered one', async () => {
    const { webhookHeaders } = await import('../../shared/webhooks/signing');
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const body = JSON.stringify({
      id: 'e1',
      type: 'conversation.created',
      timestamp: new Date().toISOString(),
      data: {},
    });
    const headers = webhookHeaders({ id: 'e1', timestamp: Math.floor(Date.now() / 1000), body }, [secret]);
    expect(verifyWebhook(secret, body, headers).type).toBe('conversation.created');
    expect(() => verifyWebhook(secret, body.replace('e1', 'e2'), headers)).toThrow();
  });

  it('builds into a publishable package whose version matches the document it was generated from', async () => {
    const packageDir = join(repoRoot, 'clients/typescript');
    const outDir = join(scratch, 'dist');
    const built = await new Promise<{ code: number; output: string }>((resolve) =>
      execFile(
        join(repoRoot, 'node_modules/.bin/tsc'),
        ['-p', join(packageDir, 'tsconfig.json'), '--outDir', outDir],
        (error, stdout, stderr) => resolve({ code: error ? 1 : 0, output: `${stdout}${stderr}` }),
      ),
    );
    expect(built.output).toBe('');
    expect(built.code).toBe(0);
    const manifest = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8')) as {
      exports: { '.': { types: string; import: string } };
      apiVersion: string;
      files: string[];
    };
    for (const target of Object.values(manifest.exports['.']))
      expect((await stat(join(outDir, target.replace('./dist/', '')))).isFile()).toBe(true);
    expect(manifest.files).toContain('dist');
    const document = JSON.parse(await readFile(join(repoRoot, 'openapi.json'), 'utf8')) as {
      info: { version: string };
    };
    expect(manifest.apiVersion).toBe(document.info.version);
    expect(API_VERSION).toBe(document.info.version);
  }, 60_000);
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs an example with tsx, as its comment says, and collects what it prints. The service's answers
 * to the example are held to the document it serves, as every integration test's are.
 */
function runExample(name: string, args: string[], env: Record<string, string>, timeoutMs = 30_000) {
  const conformance = join(repoRoot, 'test/helpers/response-conformance.register.ts');
  const child = spawn(tsx, ['--import', conformance, join(repoRoot, 'examples', name), ...args], {
    cwd: repoRoot,
    env: { ...process.env, CONFORMANCE_BASE_URL: inject('baseUrl'), ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const finished = new Promise<Run>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  return { child, finished, output: () => stdout };
}

describe('the examples', () => {
  it('update-with-if-match: answers, writes over the version read, meets a 412 and pages the messages', async () => {
    const run = await runExample('update-with-if-match.ts', [], {
      BASE_URL: inject('baseUrl'),
      API_KEY: tenant.apiKey,
      VISITOR_ID: visitor.visitor.id,
      OPERATOR_ID: tenant.operatorId,
    }).finished;
    expect(run.code, `${run.stdout}${run.stderr}`).toBe(0);
    const summary = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '') as {
      created: { status: number; id: string; version: number; etag: string };
      message: { status: number; id: string; senderType: string; senderId: string };
      patched: { status: number; version: number; etag: string | null };
      stale: { status: number; code: string; currentVersion: number };
      messages: { ids: string[]; messageCount: number };
    };
    expect(summary.created.status).toBe(201);
    expect(summary.created.etag).toBe(`"${summary.created.version}"`);
    expect(summary.message).toMatchObject({
      status: 201,
      senderType: 'operator',
      senderId: tenant.operatorId,
    });
    expect(summary.patched.status).toBe(200);
    expect(summary.patched.version).toBe(summary.created.version + 1);
    expect(summary.patched.etag).toBe(`"${summary.patched.version}"`);
    expect(summary.stale).toEqual({
      status: 412,
      code: 'PRECONDITION_FAILED',
      currentVersion: summary.patched.version,
    });
    // The visitor's first message and the operator's answer, each once, newest first.
    expect(summary.messages.messageCount).toBe(2);
    expect(summary.messages.ids).toHaveLength(2);
    expect(summary.messages.ids[0]).toBe(summary.message.id);
    expect(new Set(summary.messages.ids).size).toBe(2);
  }, 40_000);

  it('update-with-if-match is typed by the document alone: no cast, non-null assertion, any or @ts- comment', async () => {
    // The repository's strict typecheck compiles it; this keeps it from compiling by escaping the types.
    const code = (await readFile(join(repoRoot, 'examples/update-with-if-match.ts'), 'utf8'))
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|[^:])\/\/.*$/gm, '$1');
    const escapes = code
      .split('\n')
      .map((line, index) => `${index + 1}: ${line.trim()}`)
      .filter((line) => /\bas (?!const\b)|[\w\])]!(?=[.;,)[])|\bany\b|@ts-|\beval\b/.test(line));
    expect(escapes).toEqual([]);
  });

  it('follow-conversation: starts a conversation and receives its realtime notices', async () => {
    const run = await runExample('follow-conversation.ts', [], {
      BASE_URL: inject('baseUrl'),
      OPERATOR_TOKEN: tenant.operatorSession,
      VISITOR_ID: visitor.visitor.id,
    }).finished;
    expect(run.code, `${run.stdout}${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/notice message_edited/);
    expect(run.stdout).toMatch(/notice conversation_snoozed/);
  }, 40_000);

  it('mirror-events: writes every event once, and a second run adds only the new ones', async () => {
    const own = await createTenant();
    const ownVisitor = await createVisitor(own.widgetKey);
    const api = createServiceClient({ baseUrl: inject('baseUrl'), apiKey: own.apiKey });
    const start = () =>
      api.POST('/api/conversations', { body: { visitorId: ownVisitor.visitor.id, message: 'Hi' } });
    /** Until the feed serves `count` conversation.created events (it serves an event once settled). */
    const served = (count: number) =>
      eventually(
        async () =>
          (await api.GET('/api/events', { params: { query: { types: 'conversation.created' } } })).data,
        (page) => (page?.data.length ?? 0) >= count,
        { timeoutMs: 10_000, intervalMs: 200 },
      );
    await start();
    await start();
    await served(2);
    const file = join(scratch, 'events.ndjson');
    const env = { BASE_URL: inject('baseUrl'), API_KEY: own.apiKey };
    const first = await runExample('mirror-events.ts', [file], env).finished;
    expect(first.code, `${first.stdout}${first.stderr}`).toBe(0);
    const lines = async () =>
      (await readFile(file, 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { id: string; type: string });
    const once = await lines();
    expect(once.filter((event) => event.type === 'conversation.created')).toHaveLength(2);

    await start();
    await served(3);
    const second = await runExample('mirror-events.ts', [file], env).finished;
    expect(second.code, `${second.stdout}${second.stderr}`).toBe(0);
    const twice = await lines();
    expect(twice.filter((event) => event.type === 'conversation.created')).toHaveLength(3);
    expect(new Set(twice.map((event) => event.id)).size).toBe(twice.length);
  }, 60_000);

  it('webhook-receiver: verifies a real delivery from the service', async () => {
    const own = await createTenant();
    const ownVisitor = await createVisitor(own.widgetKey);
    const port = inject('webhookTestPorts')[4];
    const api = createServiceClient({ baseUrl: inject('baseUrl'), apiKey: own.apiKey });
    const hook = await api.POST('/api/webhooks', {
      body: { url: `http://127.0.0.1:${port}/hooks`, events: ['conversation.created'] },
    });
    const secret = hook.data?.secret;
    if (!secret) throw new Error(`create the webhook: ${hook.response.status} ${JSON.stringify(hook.error)}`);
    const receiver = runExample('webhook-receiver.ts', [], {
      WEBHOOK_SECRET: secret,
      PORT: String(port),
      EXIT_AFTER: '1',
    });
    const deadline = Date.now() + 15_000;
    while (!receiver.output().includes('listening') && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    await api.POST('/api/conversations', { body: { visitorId: ownVisitor.visitor.id, message: 'Hi' } });
    const run = await receiver.finished;
    expect(run.code, `${run.stdout}${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/verified conversation\.created [0-9a-f-]{36}/);
  }, 40_000);
});
