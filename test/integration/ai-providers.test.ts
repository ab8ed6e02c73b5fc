import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { keys } from '../../shared/db/keys';
import { call, platformToken, useBaseUrl } from '../helpers/api';
import { receivedCompletions } from '../helpers/fake-openai';

/**
 * Platform AI providers against the fake OpenAI-compatible API of the global setup. The handlers
 * run in this file's own process (an in-process gateway on the shared emulators) with every log
 * level on, so the test can read every line they log and look for the keys in it.
 */
interface Provider {
  id: string;
  name: string;
  kind: string;
  baseUrl: string;
  model: string;
  enabled: boolean;
  hasApiKey: boolean;
  apiKeyLast4: string | null;
  createdAt: string;
  updatedAt: string;
}
interface Probe {
  success: boolean;
  reply?: string;
  error?: string;
  latencyMs: number;
}

const logged: string[] = [];
const keysUsed: string[] = [];
let stop: (() => Promise<void>) | undefined;
let restore: (() => void) | undefined;
let table: DynamoDBDocumentClient;

beforeAll(async () => {
  const endpoints = inject('endpoints');
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
    AWS_ENDPOINT_URL_SQS: endpoints.sqs,
    AWS_ENDPOINT_URL_S3: endpoints.s3,
    AWS_ENDPOINT_URL_SESV2: endpoints.ses,
    POWERTOOLS_LOG_LEVEL: 'DEBUG',
  });
  // Every line any part of the service writes in this process, from here on.
  const originals = {
    out: process.stdout.write.bind(process.stdout),
    err: process.stderr.write.bind(process.stderr),
  };
  const capture =
    (original: typeof process.stdout.write) =>
    (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      logged.push(text);
      // The service's own lines are kept here only (they are many, at DEBUG); anything else passes.
      if (text.startsWith('{"level"')) return true;
      return (original as (chunk: string | Uint8Array, ...args: unknown[]) => boolean)(chunk, ...rest);
    };
  process.stdout.write = capture(originals.out) as typeof process.stdout.write;
  process.stderr.write = capture(originals.err) as typeof process.stderr.write;
  restore = () => {
    process.stdout.write = originals.out;
    process.stderr.write = originals.err;
  };
  const { startLocalStack } = await import('../../infra/local/stack');
  const stack = await startLocalStack({
    port: 0,
    seedDemo: false,
    runWorkers: false,
    platformAdminToken: inject('platformAdminToken'),
    env: {
      CURSOR_SIGNING_KEY: inject('cursorSigningKey'),
      AI_PROVIDER_ALLOWED_TARGETS: new URL(inject('fakeOpenAiUrl')).host,
      AI_PROVIDER_PROBE_TIMEOUT_MS: String(inject('aiProviderProbeTimeoutMs')),
    },
  });
  useBaseUrl(stack.baseUrl);
  stop = stack.stop;
  table = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: endpoints.dynamodb }));
});

afterAll(async () => {
  restore?.();
  await stop?.();
  // The capture saw the service's lines (a test of a test: the check below is not vacuous).
  expect(logged.some((line) => line.includes('"route":"createAiProvider"'))).toBe(true);
  // The keys never reached a log line, whatever the request did with them.
  for (const key of keysUsed) {
    expect(logged.join('').includes(key), `a log line holds ${key}`).toBe(false);
  }
});

const fakeUrl = () => `${inject('fakeOpenAiUrl')}/v1`;
const freshKey = () => {
  const key = `sk-test-${crypto.randomUUID().replaceAll('-', '')}`;
  keysUsed.push(key);
  return key;
};
const uniqueModel = (base = 'pong') => `${base}-${crypto.randomUUID().slice(0, 8)}`;

async function createProvider(body: Record<string, unknown>) {
  const response = await call<Provider>('POST', '/api/admin/ai-providers', {
    token: platformToken(),
    body: { name: 'Gateway', kind: 'openai-compatible', baseUrl: fakeUrl(), model: uniqueModel(), ...body },
  });
  expect(response.status, response.text).toBe(201);
  return response.body;
}

const probe = (id: string) =>
  call<Probe>('POST', `/api/admin/ai-providers/${id}/test`, { token: platformToken() });

describe('AI providers', () => {
  it('stores the key encrypted and never returns it', async () => {
    const apiKey = freshKey();

    const created = await createProvider({ apiKey });
    const listed = await call<{ data: Provider[] }>('GET', '/api/admin/ai-providers?limit=100', {
      token: platformToken(),
    });
    const got = await call<Provider>('GET', `/api/admin/ai-providers/${created.id}`, {
      token: platformToken(),
    });

    expect(created).toMatchObject({
      kind: 'openai-compatible',
      baseUrl: fakeUrl(),
      enabled: true,
      hasApiKey: true,
      apiKeyLast4: apiKey.slice(-4),
    });
    expect(Object.keys(created)).not.toContain('apiKey');
    expect(got.body).toEqual(created);
    expect(listed.body.data).toContainEqual(created);
    for (const text of [JSON.stringify(created), listed.text, got.text]) expect(text).not.toContain(apiKey);
    const { Item } = await table.send(
      new GetCommand({
        TableName: inject('tableName'),
        Key: keys.aiProvider(created.id),
        ConsistentRead: true,
      }),
    );
    expect(JSON.stringify(Item)).not.toContain(apiKey);
    // Sealed by KMS under the admin function's key, as deployed (locally the key service's KMS).
    expect(String(Item?.apiKeySealed)).toMatch(/^v2\./);
  });

  it('keeps the stored key when a PATCH omits apiKey or sends it empty, and replaces it when given', async () => {
    const original = freshKey();
    const created = await createProvider({ apiKey: original });
    const model = created.model;
    const patch = (body: Record<string, unknown>) =>
      call<Provider>('PATCH', `/api/admin/ai-providers/${created.id}`, { token: platformToken(), body });

    const renamed = await patch({ name: 'Renamed' });
    const emptied = await patch({ apiKey: '', enabled: false });
    await probe(created.id);
    const replacement = freshKey();
    const replaced = await patch({ apiKey: replacement });
    await probe(created.id);

    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Renamed', hasApiKey: true, apiKeyLast4: original.slice(-4) });
    expect(emptied.body).toMatchObject({ enabled: false, hasApiKey: true, apiKeyLast4: original.slice(-4) });
    expect(replaced.body).toMatchObject({ name: 'Renamed', apiKeyLast4: replacement.slice(-4) });
    const sent = (await receivedCompletions(inject('fakeOpenAiUrl'), model)).map(
      (entry) => entry.authorization,
    );
    expect(sent).toEqual([`Bearer ${original}`, `Bearer ${replacement}`]);
    for (const response of [renamed, emptied, replaced]) {
      expect(response.text).not.toContain(original);
      expect(response.text).not.toContain(replacement);
    }
  });

  it('deletes idempotently', async () => {
    const created = await createProvider({});
    const remove = () => call('DELETE', `/api/admin/ai-providers/${created.id}`, { token: platformToken() });

    const first = await remove();
    const second = await remove();
    const never = await call('DELETE', `/api/admin/ai-providers/${crypto.randomUUID()}`, {
      token: platformToken(),
    });
    const got = await call('GET', `/api/admin/ai-providers/${created.id}`, { token: platformToken() });
    const patched = await call('PATCH', `/api/admin/ai-providers/${created.id}`, {
      token: platformToken(),
      body: { name: 'Gone' },
    });

    expect([first.status, second.status, never.status]).toEqual([200, 200, 200]);
    expect([first.body, second.body, never.body]).toEqual([
      { success: true },
      { success: true },
      { success: true },
    ]);
    expect([got.status, patched.status]).toEqual([404, 404]);
    expect((await probe(created.id)).status).toBe(404);
  });

  it('is for the platform admin only, and checks its input', async () => {
    const created = await createProvider({});
    const orgKey = (
      await call<{ id: string }>('POST', '/api/admin/organizations', {
        token: platformToken(),
        body: { name: 'Not a platform', modules: ['automation_api'] },
      })
    ).body.id;
    const key = await call<{ key: string }>('POST', `/api/admin/organizations/${orgKey}/api-keys`, {
      token: platformToken(),
      body: { name: 'k' },
    });

    const byOrg = await call('GET', '/api/admin/ai-providers', { token: key.body.key });
    const badKind = await call<{ error: { details: { field: string } } }>('POST', '/api/admin/ai-providers', {
      token: platformToken(),
      body: { name: 'x', kind: 'anthropic', baseUrl: fakeUrl(), model: 'm' },
    });
    const badUrl = await call<{ error: { details: { field: string } } }>('POST', '/api/admin/ai-providers', {
      token: platformToken(),
      body: { name: 'x', kind: 'openai-compatible', baseUrl: 'ftp://example.com', model: 'm' },
    });
    const unknownField = await call('PATCH', `/api/admin/ai-providers/${created.id}`, {
      token: platformToken(),
      body: { apiKeyLast4: '1234' },
    });

    expect(byOrg.status).toBe(403);
    expect(badKind.status).toBe(422);
    expect(badKind.body.error.details.field).toBe('kind');
    expect(badUrl.status).toBe(422);
    expect(badUrl.body.error.details.field).toBe('baseUrl');
    expect(unknownField.status).toBe(422);
  });
});

describe('POST /api/admin/ai-providers/{id}/test', () => {
  it("answers the model's reply and the latency, sending the stored key and a short probe", async () => {
    const apiKey = freshKey();
    const created = await createProvider({ apiKey });

    const response = await probe(created.id);

    expect(response.status, response.text).toBe(200);
    expect(response.body.success).toBe(true);
    expect(response.body.reply).toBe('pong');
    expect(Number.isInteger(response.body.latencyMs)).toBe(true);
    expect(response.body.latencyMs).toBeGreaterThanOrEqual(0);
    const [request] = await receivedCompletions(inject('fakeOpenAiUrl'), created.model);
    expect(request?.path).toBe('/v1/chat/completions');
    expect(request?.authorization).toBe(`Bearer ${apiKey}`);
    expect(request?.body).toMatchObject({ model: created.model, messages: [{ role: 'user' }] });
    expect(typeof request?.body.max_tokens).toBe('number');
  });

  it('cuts the reply to 200 characters', async () => {
    const created = await createProvider({ model: 'long-500' });

    const response = await probe(created.id);

    expect(response.body.success).toBe(true);
    expect(response.body.reply).toBe('é'.repeat(200));
  });

  it('reports an upstream error as data, without the key the provider echoed', async () => {
    const apiKey = freshKey();
    const created = await createProvider({ apiKey, model: 'status-401' });

    const response = await probe(created.id);

    expect(response.status).toBe(200);
    expect(response.body.success).toBe(false);
    expect(response.body.error).toMatch(/^http_401/);
    expect(response.text).not.toContain(apiKey);
  });

  it('gives up after the timeout and says so, with the time it waited', async () => {
    const timeoutMs = inject('aiProviderProbeTimeoutMs');
    const created = await createProvider({ model: `slow-${timeoutMs + 2_000}` });

    const response = await probe(created.id);

    expect(response.body).toMatchObject({ success: false, error: 'timeout' });
    expect(response.body.latencyMs).toBeGreaterThanOrEqual(timeoutMs - 50);
    expect(response.body.latencyMs).toBeLessThan(timeoutMs + 1_500);
  });

  it('follows no redirect and reaches no non-public address', async () => {
    const redirect = await createProvider({ model: 'redirect' });
    const metadata = await createProvider({ baseUrl: 'http://169.254.169.254/latest' });
    const privateHttps = await createProvider({ baseUrl: 'https://10.0.0.7/v1' });
    const garbage = await createProvider({ model: 'garbage' });

    const answers = await Promise.all([redirect, metadata, privateHttps, garbage].map((p) => probe(p.id)));

    expect(answers.map((answer) => answer.body.success)).toEqual([false, false, false, false]);
    expect(answers[0]?.body.error).toBe('redirect_not_followed');
    expect(answers[1]?.body.error).toBe('https_required');
    expect(answers[2]?.body.error).toBe('non_public_address');
    expect(answers[3]?.body.error).toMatch(/^unexpected_response/);
  });
});
