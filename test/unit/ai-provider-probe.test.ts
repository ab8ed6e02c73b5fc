import { describe, expect, it } from 'vitest';
import { probeProvider, providerAllowList, truncateChars } from '../../shared/ai-providers/probe';
import type { GuardedRequest, GuardedResponse } from '../../shared/webhooks/client';

const answer = (partial: Partial<GuardedResponse>): GuardedResponse => ({
  status: 200,
  headers: {},
  body: '',
  durationMs: 42,
  error: null,
  ...partial,
});

describe('providerAllowList', () => {
  it('reads host:port entries and bare hosts (any port)', () => {
    expect(providerAllowList(' localhost, 127.0.0.1:8080,[::1], [::1]:9000 ,')).toEqual({
      targets: new Set(['127.0.0.1:8080', '[::1]:9000']),
      hosts: new Set(['localhost', '[::1]']),
    });
  });
});

describe('truncateChars', () => {
  it('counts characters, never splitting one', () => {
    expect(truncateChars('😀'.repeat(3), 2)).toBe('😀😀');
    expect(truncateChars('short', 200)).toBe('short');
  });
});

describe('probeProvider', () => {
  it('posts one short chat completion with the key, to {baseUrl}/chat/completions', async () => {
    const sent: GuardedRequest[] = [];

    const outcome = await probeProvider(
      { baseUrl: 'https://llm.example/v1/', model: 'm1', apiKey: 'sk-secret-1234' },
      {
        allowList: '',
        timeoutMs: 10_000,
        send: async (request) => {
          sent.push(request);
          return answer({ body: JSON.stringify({ choices: [{ message: { content: 'pong' } }] }) });
        },
      },
    );

    expect(outcome).toEqual({ success: true, reply: 'pong', latencyMs: 42 });
    expect(sent[0]).toMatchObject({
      method: 'POST',
      url: 'https://llm.example/v1/chat/completions',
      timeoutMs: 10_000,
      headers: expect.objectContaining({ authorization: 'Bearer sk-secret-1234' }),
    });
    expect(JSON.parse(sent[0]?.body ?? '{}')).toMatchObject({
      model: 'm1',
      messages: [{ role: 'user', content: expect.any(String) }],
      max_tokens: expect.any(Number),
    });
    // Not allow-listed: the guarded path (https, public addresses) decides.
    expect(sent[0]?.allowed.size).toBe(0);
  });

  it('admits a bare allow-listed host on any port', async () => {
    const sent: GuardedRequest[] = [];

    await probeProvider(
      { baseUrl: 'http://localhost:4567', model: 'm', apiKey: null },
      {
        allowList: 'localhost',
        timeoutMs: 1_000,
        send: async (request) => {
          sent.push(request);
          return answer({ body: '{"choices":[{"message":{"content":"ok"}}]}' });
        },
      },
    );

    expect([...(sent[0]?.allowed ?? [])]).toEqual(['localhost:4567']);
    expect(sent[0]?.headers).not.toHaveProperty('authorization');
  });

  it('reports failures as data and never repeats the key', async () => {
    const key = 'sk-secret-abcdef';
    const failing = (response: GuardedResponse) =>
      probeProvider(
        { baseUrl: 'https://llm.example', model: 'm', apiKey: key },
        { allowList: '', timeoutMs: 1_000, send: async () => response },
      );

    const upstream = await failing(
      answer({
        status: 401,
        body: JSON.stringify({ error: { message: `Incorrect API key provided: ${key}` } }),
      }),
    );
    const timeout = await failing(answer({ status: null, error: 'timeout', durationMs: 1_000 }));
    const junk = await failing(answer({ body: '<html>' }));

    expect(upstream).toEqual({
      success: false,
      error: 'http_401: Incorrect API key provided: [redacted]',
      latencyMs: 42,
    });
    expect(timeout).toEqual({ success: false, error: 'timeout', latencyMs: 1_000 });
    expect(junk.success).toBe(false);
  });
});
