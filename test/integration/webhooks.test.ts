import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { eventually } from '../helpers/eventually';

/** A local receiver: records what it is sent and answers with the status the test sets. */
interface Receiver {
  url: string;
  received: { headers: IncomingHttpHeaders; body: string }[];
  status: number;
  close(): Promise<void>;
}

async function startReceiver(port: number): Promise<Receiver> {
  const receiver = { received: [], status: 200 } as unknown as Receiver;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      receiver.received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(receiver.status).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${port}/hooks`;
  receiver.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return receiver;
}

type Delivery = {
  id: string;
  status: string;
  attempts: number;
  responseStatus: number | null;
  event: string;
  eventId: string;
};
type Created = { id: string; url: string; events: string[]; secret?: string };

let tenant: Tenant;
let healthy: Receiver;
let flaky: Receiver;

beforeAll(async () => {
  const [first, second] = inject('webhookTestPorts');
  tenant = await createTenant();
  healthy = await startReceiver(first ?? 0);
  flaky = await startReceiver(second ?? 0);
});

afterAll(async () => {
  await Promise.all([healthy.close(), flaky.close()]);
});

const register = (body: Record<string, unknown>) =>
  call<Created>('POST', '/api/webhooks', { token: tenant.apiKey, body });
const deliveriesOf = async (webhookId: string) =>
  (await call<{ data: Delivery[] }>('GET', `/api/webhooks/${webhookId}/deliveries`, { token: tenant.apiKey }))
    .body.data;

describe('webhooks', () => {
  it('delivers each subscribed event, signed so that the standardwebhooks library verifies it', async () => {
    const created = await register({ url: healthy.url, events: ['conversation.created', 'message.created'] });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_/);
    const visitor = await createVisitor(tenant.widgetKey);
    const conversation = await call<{ id: string }>('POST', '/api/conversations', {
      token: visitor.token,
      body: { message: 'Hello' },
    });
    await call('PATCH', `/api/conversations/${conversation.body.id}`, {
      token: tenant.apiKey,
      body: { priority: 'high' },
    });

    const received = await eventually(
      () => healthy.received,
      (list) => list.length >= 2,
    );
    expect(received).toHaveLength(2);
    const verifier = new Webhook(created.body.secret ?? '');
    const payloads = received.map(({ headers, body }) => {
      const verified = verifier.verify(body, {
        'webhook-id': String(headers['webhook-id']),
        'webhook-timestamp': String(headers['webhook-timestamp']),
        'webhook-signature': String(headers['webhook-signature']),
      }) as { id: string; type: string; organizationId: string; data: { id: string } };
      expect(headers['webhook-id']).toBe(verified.id);
      return verified;
    });
    expect(payloads.map((payload) => payload.type).sort()).toEqual([
      'conversation.created',
      'message.created',
    ]);
    expect(payloads.every((payload) => payload.organizationId === tenant.orgId)).toBe(true);
    expect(() =>
      verifier.verify(`${received[0]?.body} `, {
        'webhook-id': String(received[0]?.headers['webhook-id']),
        'webhook-timestamp': String(received[0]?.headers['webhook-timestamp']),
        'webhook-signature': String(received[0]?.headers['webhook-signature']),
      }),
    ).toThrow();

    const history = await eventually(
      () => deliveriesOf(created.body.id),
      (list) => list.every((d) => d.status === 'succeeded') && list.length === 2,
    );
    expect(history.map((delivery) => [delivery.status, delivery.attempts, delivery.responseStatus])).toEqual([
      ['succeeded', 1, 200],
      ['succeeded', 1, 200],
    ]);
  });

  it('retries on the schedule, fails when it is spent, and succeeds on a manual retry', async () => {
    flaky.status = 500;
    const created = await register({ url: flaky.url, events: ['conversation.created'] });
    const visitor = await createVisitor(tenant.widgetKey);
    await call('POST', '/api/conversations', { token: visitor.token, body: {} });
    const [failed] = await eventually(
      () => deliveriesOf(created.body.id),
      (list) => list[0]?.status === 'failed',
      { timeoutMs: 20_000 },
    );
    expect(failed).toMatchObject({ status: 'failed', attempts: 3, responseStatus: 500 });
    const ids = new Set(flaky.received.map((request) => request.headers['webhook-id']));
    expect(ids.size).toBe(1);
    expect(flaky.received).toHaveLength(3);

    flaky.status = 200;
    const retry = await call('POST', `/api/webhooks/${created.body.id}/deliveries/${failed?.id}/retry`, {
      token: tenant.apiKey,
    });
    expect(retry.status).toBe(202);
    expect(retry.body).toEqual({ success: true, status: 'pending' });
    const [succeeded] = await eventually(
      () => deliveriesOf(created.body.id),
      (list) => list[0]?.status === 'succeeded',
    );
    expect(succeeded).toMatchObject({ status: 'succeeded', attempts: 4, responseStatus: 200 });
    const again = await call('POST', `/api/webhooks/${created.body.id}/deliveries/${failed?.id}/retry`, {
      token: tenant.apiKey,
    });
    expect(again.status).toBe(409);
  });

  it('delivers an event too large to travel in its queue message, whole and signed', async () => {
    // Its own organization and receiver: the other tests' webhooks must not see this event.
    const own = await createTenant();
    const receiver = await startReceiver(inject('webhookTestPorts')[2] ?? 0);
    try {
      const created = await call<Created>('POST', '/api/webhooks', {
        token: own.apiKey,
        body: { url: receiver.url, events: ['conversation.created'] },
      });
      const visitor = await createVisitor(own.widgetKey);
      // ~75 KB of free-form values (each field within its 16 KiB): beyond what a job carries inline
      // (64 KiB), so the event is stored and referenced.
      const metadata = Object.fromEntries(
        Array.from({ length: 15 }, (_, i) => [`k${i}`, `${i}`.padEnd(1_000, 'x')]),
      );
      const customFields = Object.fromEntries(
        Array.from({ length: 4 }, (_, i) => [`field${i}`, `${i}`.padEnd(15_000, 'y')]),
      );
      // Conversations take values of the organization's custom fields only.
      for (const name of Object.keys(customFields)) {
        const defined = await call('POST', '/api/custom-fields', {
          token: own.apiKey,
          body: { name, type: 'text', translations: [{ locale: 'en', status: 'published', label: name }] },
        });
        expect(defined.status).toBe(201);
      }
      const conversation = await call<{ id: string }>('POST', '/api/conversations', {
        token: own.apiKey,
        body: { visitorId: visitor.visitor.id, metadata, customFields },
      });
      expect(conversation.status).toBe(201);

      const [arrived] = await eventually(
        () => receiver.received,
        (list) => list.length >= 1,
      );
      const verified = new Webhook(created.body.secret ?? '').verify(arrived?.body ?? '', {
        'webhook-id': String(arrived?.headers['webhook-id']),
        'webhook-timestamp': String(arrived?.headers['webhook-timestamp']),
        'webhook-signature': String(arrived?.headers['webhook-signature']),
      }) as {
        type: string;
        data: { id: string; metadata: Record<string, string>; customFields: Record<string, string> };
      };
      expect(Buffer.byteLength(arrived?.body ?? '')).toBeGreaterThan(64 * 1024);
      expect(verified.type).toBe('conversation.created');
      expect(verified.data.id).toBe(conversation.body.id);
      expect(verified.data.metadata).toEqual(metadata);
      expect(verified.data.customFields).toEqual(customFields);
      // The payload's data is the REST answer of the same version, field for field and in order.
      const rest = await call('GET', `/api/conversations/${conversation.body.id}`, { token: own.apiKey });
      expect(JSON.stringify(verified.data)).toBe(rest.text);
      const history = await eventually(
        async () =>
          (
            await call<{ data: Delivery[] }>('GET', `/api/webhooks/${created.body.id}/deliveries`, {
              token: own.apiKey,
            })
          ).body.data,
        (list) => list[0]?.status === 'succeeded',
      );
      expect(history.map((delivery) => [delivery.status, delivery.attempts])).toEqual([['succeeded', 1]]);
    } finally {
      await receiver.close();
    }
  });

  it('sends nothing more to a deleted webhook', async () => {
    const before = healthy.received.length;
    const created = await register({ url: healthy.url, events: ['conversation.created'] });
    expect((await call('DELETE', `/api/webhooks/${created.body.id}`, { token: tenant.apiKey })).body).toEqual(
      { success: true },
    );
    expect((await call('DELETE', `/api/webhooks/${created.body.id}`, { token: tenant.apiKey })).status).toBe(
      404,
    );
    // The first webhook of this file subscribes to conversation.created too: exactly one more arrives.
    const visitor = await createVisitor(tenant.widgetKey);
    await call('POST', '/api/conversations', { token: visitor.token, body: {} });
    await eventually(
      () => healthy.received.length,
      (count) => count >= before + 1,
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(healthy.received.length).toBe(before + 1);
  });

  it('signs with both secrets for a day after a rotation', async () => {
    const created = await register({ url: healthy.url, events: ['note.created'] });
    const rotated = await call<{ secret: string }>('POST', `/api/webhooks/${created.body.id}/rotate-secret`, {
      token: tenant.apiKey,
    });
    expect(rotated.body.secret).toMatch(/^whsec_/);
    const tested = await call<Delivery>('POST', `/api/webhooks/${created.body.id}/test`, {
      token: tenant.apiKey,
    });
    expect(tested.status).toBe(202);
    expect(tested.body).toMatchObject({ event: 'webhook.test', status: 'pending', attempts: 0 });
    const received = await eventually(
      () => healthy.received.filter((request) => request.headers['webhook-id'] === tested.body.eventId),
      (list) => list.length > 0,
    );
    const request = received[0];
    const headers = {
      'webhook-id': String(request?.headers['webhook-id']),
      'webhook-timestamp': String(request?.headers['webhook-timestamp']),
      'webhook-signature': String(request?.headers['webhook-signature']),
    };
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    for (const secret of [created.body.secret ?? '', rotated.body.secret]) {
      expect(() => new Webhook(secret).verify(request?.body ?? '', headers)).not.toThrow();
    }
  });

  it('refuses targets that are not public HTTPS, bad secrets and unknown events; never shows a secret again', async () => {
    const refusals = [
      { url: 'http://example.com/hook', events: ['conversation.created'] },
      { url: 'https://127.0.0.1/hook', events: ['conversation.created'] },
      { url: 'https://169.254.169.254/latest', events: ['conversation.created'] },
      { url: 'https://[::ffff:127.0.0.1]/x', events: ['conversation.created'] },
      { url: 'http://127.0.0.1:9/not-allowed', events: ['conversation.created'] },
    ];
    for (const body of refusals) {
      const refused = await register(body);
      expect(refused.status, body.url).toBe(422);
      expect(refused.body).toMatchObject({ error: { details: { field: 'url' } } });
    }
    expect((await register({ url: healthy.url, events: ['conversation.exploded'] })).status).toBe(422);
    expect(
      (await register({ url: healthy.url, events: ['conversation.created'], secret: 'hunter2' })).status,
    ).toBe(422);
    const ownSecret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const withOwn = await register({ url: healthy.url, events: ['conversation.created'], secret: ownSecret });
    expect(withOwn.status).toBe(201);
    expect(withOwn.text).not.toContain(ownSecret);
    const list = await call('GET', '/api/webhooks', { token: tenant.apiKey });
    expect(list.text).not.toContain('whsec_');
    expect(list.body).toMatchObject({ pagination: { page: 1, pageSize: 20 } });
    const catalog = await call<{ events: { event: string }[] }>('GET', '/api/webhooks/events', {
      token: tenant.apiKey,
    });
    expect(catalog.body.events.map((entry) => entry.event)).toContain('message.updated');
    expect((await call('DELETE', `/api/webhooks/${withOwn.body.id}`, { token: tenant.apiKey })).status).toBe(
      200,
    );
  });

  it('keeps webhook management to admins, and organizations apart', async () => {
    expect(
      (
        await call('POST', '/api/webhooks', {
          token: tenant.operatorSession,
          body: { url: healthy.url, events: ['note.created'] },
        })
      ).status,
    ).toBe(403);
    const other = await createTenant();
    const created = await register({ url: healthy.url, events: ['note.created'] });
    expect(
      (await call('GET', `/api/webhooks/${created.body.id}/deliveries`, { token: other.apiKey })).status,
    ).toBe(404);
    expect(
      (
        await call('PATCH', `/api/webhooks/${created.body.id}`, {
          token: other.apiKey,
          body: { active: false },
        })
      ).status,
    ).toBe(404);
    const paused = await call<{ active: boolean }>('PATCH', `/api/webhooks/${created.body.id}`, {
      token: tenant.apiKey,
      body: { active: false },
    });
    expect(paused.body.active).toBe(false);
  });
});
