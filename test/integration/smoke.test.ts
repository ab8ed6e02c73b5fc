import { readFile } from 'node:fs/promises';
import { describe, expect, inject, it } from 'vitest';
import { call, createTenant, createVisitor } from '../helpers/api';
import { eventuallyIndexed } from '../helpers/indexed';

describe('service documents', () => {
  it('answers health with the version and a request id', async () => {
    const response = await call('GET', '/api/health');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok', version: expect.any(String) });
    expect(response.headers.get('x-request-id')).toBeTruthy();
  });

  it('serves an OpenAPI 3.1 document listing the conversation routes', async () => {
    const response = await call<{ openapi: string; paths: Record<string, Record<string, unknown>> }>(
      'GET',
      '/api/openapi.json',
    );
    expect(response.status).toBe(200);
    expect(response.body.openapi).toBe('3.1.0');
    expect(Object.keys(response.body.paths['/api/conversations/{id}'] ?? {})).toEqual(['get', 'patch']);
  });

  it('names as its server the origin it was fetched from, so a client generated from it calls here', async () => {
    const response = await call<{ servers: { url: string }[] }>('GET', '/api/openapi.json');

    expect(response.body.servers).toEqual([
      { url: inject('baseUrl').replace(/\/+$/, ''), description: expect.any(String) },
    ]);
    // A client resolving a path against that server reaches the API.
    const health = await fetch(`${response.body.servers[0]?.url}/api/health`);
    expect(health.status).toBe(200);
  });

  it('the committed document gives an SDK a server it can use as is: http://localhost:3000 by default', async () => {
    const committed = JSON.parse(await readFile(new URL('../../openapi.json', import.meta.url), 'utf8')) as {
      servers: { url: string; variables?: Record<string, { default: string }> }[];
    };

    expect(committed.servers).toHaveLength(1);
    const [server] = committed.servers;
    const resolved = (server?.url ?? '').replace(
      /\{(\w+)\}/g,
      (_, name: string) => server?.variables?.[name]?.default ?? '',
    );
    expect(resolved).toBe('http://localhost:3000');
    expect(() => new URL('/api/health', resolved)).not.toThrow();
  });
});

describe('conversations end to end', () => {
  it('creates, reads and lists a conversation', async () => {
    const tenant = await createTenant();
    const visitor = await createVisitor(tenant.widgetKey, { identifier: 'ada@example.com' });
    const created = await call<{ id: string; messageCount: number }>('POST', '/api/conversations', {
      token: tenant.apiKey,
      body: { visitorId: visitor.visitor.id, message: 'Hello' },
    });
    expect(created.status).toBe(201);
    expect(created.body.messageCount).toBe(1);
    const read = await call<{ id: string; visitor: { identifier: string } }>(
      'GET',
      `/api/conversations/${created.body.id}`,
      {
        token: tenant.apiKey,
      },
    );
    expect(read.status).toBe(200);
    expect(read.body.visitor.identifier).toBe('ada@example.com');
    // The listing reads an index: it may show the new conversation up to 2 s later.
    const listed = await eventuallyIndexed(
      () => call<{ data: { id: string }[] }>('GET', '/api/conversations', { token: tenant.apiKey }),
      (answer) => answer.body.data.length > 0,
    );
    expect(listed.body.data.map((c) => c.id)).toEqual([created.body.id]);
  });
});
