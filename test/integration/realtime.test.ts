import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { WebSocket } from 'ws';
import { call, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { eventually } from '../helpers/eventually';

type Notice = {
  id: string;
  type: string;
  conversationId: string;
  timestamp: string;
  payload: Record<string, unknown>;
};

/** A realtime client: connects with a token and keeps every notice it receives. */
async function connect(token: string): Promise<{ notices: Notice[]; close(): void }> {
  const url = `${inject('baseUrl').replace(/^http/, 'ws')}/realtime?token=${encodeURIComponent(token)}`;
  const ws = new WebSocket(url);
  const notices: Notice[] = [];
  ws.on('message', (data) => notices.push(JSON.parse(String(data)) as Notice));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_request, response) =>
      reject(new Error(`refused with ${response.statusCode}`)),
    );
  });
  return { notices, close: () => ws.close() };
}

let tenant: Tenant;
let clients: Awaited<ReturnType<typeof connect>>[] = [];

beforeAll(async () => {
  tenant = await createTenant();
});

afterAll(() => {
  for (const client of clients) client.close();
});

describe('realtime channel', () => {
  it('refuses connections without a valid operator session or visitor token', async () => {
    await expect(connect('svc_os_not-a-token')).rejects.toThrow(/401/);
    await expect(connect(tenant.apiKey)).rejects.toThrow(/403/);
  });

  it('tells operators everything, a visitor only about its own conversation, and no visitor about notes', async () => {
    const owner = await createVisitor(tenant.widgetKey);
    const stranger = await createVisitor(tenant.widgetKey);
    const operator = await connect(tenant.operatorSession);
    const ownerClient = await connect(owner.token);
    const strangerClient = await connect(stranger.token);
    clients = [operator, ownerClient, strangerClient];

    const conversation = await call<{ id: string }>('POST', '/api/conversations', {
      token: owner.token,
      body: {},
    });
    const base = `/api/conversations/${conversation.body.id}`;
    const message = await call<{ id: string }>('POST', `${base}/messages`, {
      token: owner.token,
      body: { content: 'Helo' },
    });
    await call('PATCH', `${base}/messages/${message.body.id}`, {
      token: owner.token,
      body: { content: 'Hello' },
    });
    const note = await call<{ id: string }>('POST', `${base}/notes`, {
      token: tenant.operatorSession,
      body: { content: 'VIP' },
    });
    await call('DELETE', `${base}/notes/${note.body.id}`, { token: tenant.operatorSession });
    await call('POST', `${base}/snooze`, {
      token: tenant.apiKey,
      body: { until: new Date(Date.now() + 3_600_000).toISOString(), reason: 'Waiting for the courier' },
    });

    await eventually(() => operator.notices.length >= 3 && ownerClient.notices.length >= 1, Boolean, {
      intervalMs: 50,
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(operator.notices.map((notice) => notice.type)).toEqual([
      'message_edited',
      'note_invalidated',
      'conversation_snoozed',
    ]);
    expect(operator.notices.every((notice) => notice.conversationId === conversation.body.id)).toBe(true);
    expect(ownerClient.notices.map((notice) => notice.type)).toEqual(['message_edited']);
    expect(ownerClient.notices[0]?.payload).toMatchObject({
      message: { id: message.body.id, content: 'Hello' },
    });
    expect(strangerClient.notices).toEqual([]);
    expect(operator.notices[2]?.payload).toMatchObject({ reason: 'Waiting for the courier' });
  });
});
