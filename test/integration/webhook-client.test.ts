import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWebhookClient, postWebhook } from '../../shared/webhooks/client';
import { generateSecret, webhookHeaders } from '../../shared/webhooks/signing';
import { checkTarget, type HostLookup, parseAllowedTargets } from '../../shared/webhooks/targets';

type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void;

interface Receiver {
  port: number;
  hostPort: string;
  connections: number;
  requests: { headers: IncomingMessage['headers']; body: string }[];
  close(): Promise<void>;
}

/** A real HTTP endpoint on loopback that counts TCP connections, not just requests. */
async function startReceiver(handler: Handler): Promise<Receiver> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      receiver.requests.push({ headers: request.headers, body });
      handler(request, response, body);
    });
  });
  const receiver: Receiver = {
    port: 0,
    hostPort: '',
    connections: 0,
    requests: [],
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on('connection', () => {
    receiver.connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.hostPort = `127.0.0.1:${receiver.port}`;
  return receiver;
}

const reply =
  (status: number, headers: Record<string, string> = {}): Handler =>
  (_request, response) => {
    response.writeHead(status, headers);
    response.end('{"received":true}');
  };

/**
 * Every host:port the process opens a TCP socket to (plain or TLS: both go through
 * `net.Socket#connect`), whatever client library made it.
 */
const connectAttempts: string[] = [];
const originalConnect = Socket.prototype.connect;
function recordingConnect(this: Socket, ...args: unknown[]): Socket {
  // net.connect/tls.connect pass their normalized arguments as one array: [options, callback].
  const [first, second] = Array.isArray(args[0]) ? (args[0] as unknown[]) : args;
  const target =
    typeof first === 'object' && first !== null
      ? (first as { host?: string; port?: number | string })
      : { port: first as number | string, host: typeof second === 'string' ? second : undefined };
  connectAttempts.push(`${target.host}:${target.port}`);
  return (originalConnect as (...rest: unknown[]) => Socket).apply(this, args);
}

const secret = generateSecret();
const signed = () => {
  const body = JSON.stringify({ id: 'evt_1', type: 'conversation.created', data: { ok: true } });
  const message = { id: 'evt_1', timestamp: Math.floor(Date.now() / 1000), body };
  return { body, headers: webhookHeaders(message, [secret]) };
};

const client = createWebhookClient();
const receivers: Receiver[] = [];
async function receiver(handler: Handler): Promise<Receiver> {
  const started = await startReceiver(handler);
  receivers.push(started);
  return started;
}

beforeEach(() => {
  connectAttempts.length = 0;
  Socket.prototype.connect = recordingConnect as typeof Socket.prototype.connect;
});

afterEach(async () => {
  Socket.prototype.connect = originalConnect;
  await Promise.all(receivers.splice(0).map((started) => started.close()));
});

afterAll(async () => {
  await client.close();
});

describe('webhook client against an allow-listed local endpoint', () => {
  it('delivers a signed POST and reports a 200 as ok', async () => {
    // Prepare
    const target = await receiver(reply(200));
    const { body, headers } = signed();

    // Act
    const result = await client.post({
      url: `http://${target.hostPort}/hooks`,
      headers,
      body,
      allowed: parseAllowedTargets(target.hostPort),
    });

    // Assess
    expect(result).toMatchObject({ ok: true, status: 200, error: null });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(target.requests).toHaveLength(1);
    const received = target.requests[0];
    expect(received?.body).toBe(body);
    expect(received?.headers['content-type']).toBe('application/json');
    expect(() =>
      new Webhook(secret).verify(received?.body ?? '', {
        'webhook-id': String(received?.headers['webhook-id']),
        'webhook-timestamp': String(received?.headers['webhook-timestamp']),
        'webhook-signature': String(received?.headers['webhook-signature']),
      }),
    ).not.toThrow();
  });

  it('reports a 500 as not ok with its status', async () => {
    const target = await receiver(reply(500));
    const { body, headers } = signed();

    const result = await client.post({
      url: `http://${target.hostPort}/`,
      headers,
      body,
      allowed: parseAllowedTargets(target.hostPort),
    });

    expect(result).toMatchObject({ ok: false, status: 500 });
    expect(result.error).toEqual(expect.any(String));
  });

  it.each([301, 307])('does not follow a %i to the metadata service', async (status) => {
    // Prepare
    const target = await receiver(reply(status, { location: 'http://169.254.169.254/latest/meta-data/' }));
    const { body, headers } = signed();

    // Act
    const result = await client.post({
      url: `http://${target.hostPort}/`,
      headers,
      body,
      allowed: parseAllowedTargets(target.hostPort),
    });

    // Assess
    expect(result).toMatchObject({ ok: false, status, error: 'redirect_not_followed' });
    expect(target.requests).toHaveLength(1);
    // The channel does see connects (the one to the endpoint), so its silence below means something.
    expect(connectAttempts).toContain(`127.0.0.1:${target.port}`);
    expect(connectAttempts.some((attempt) => attempt.startsWith('169.254.169.254'))).toBe(false);
  });

  it('does not follow a redirect even to another allow-listed endpoint', async () => {
    // Prepare
    const canary = await receiver(reply(200));
    const target = await receiver(reply(307, { location: `http://${canary.hostPort}/` }));
    const { body, headers } = signed();

    // Act
    const result = await client.post({
      url: `http://${target.hostPort}/`,
      headers,
      body,
      allowed: parseAllowedTargets(`${target.hostPort},${canary.hostPort}`),
    });

    // Assess
    expect(result).toMatchObject({ ok: false, status: 307, error: 'redirect_not_followed' });
    expect(canary.connections).toBe(0);
  });

  it('gives up on a slow endpoint at the timeout', async () => {
    // Prepare
    const target = await receiver((_request, response) => {
      setTimeout(() => response.writeHead(200).end(), 2_000).unref();
    });
    const { body, headers } = signed();

    // Act
    const result = await client.post({
      url: `http://${target.hostPort}/`,
      headers,
      body,
      timeoutMs: 200,
      allowed: parseAllowedTargets(target.hostPort),
    });

    // Assess
    expect(result).toMatchObject({ ok: false, status: null, error: 'timeout' });
    expect(result.durationMs).toBeGreaterThanOrEqual(190);
    expect(result.durationMs).toBeLessThan(1_500);
  });

  it('reports a closed port as connection_refused', async () => {
    // Prepare: a port that was just listening and is closed now
    const gone = await startReceiver(reply(200));
    await gone.close();
    const { body, headers } = signed();

    // Act
    const result = await client.post({
      url: `http://${gone.hostPort}/`,
      headers,
      body,
      allowed: parseAllowedTargets(gone.hostPort),
    });

    // Assess
    expect(result).toMatchObject({ ok: false, status: null, error: 'connection_refused' });
  });
});

describe('webhook client SSRF guard', () => {
  it.each([
    ['http://127.0.0.1:PORT/', 'https_required'],
    ['https://127.0.0.1:PORT/', 'non_public_address'],
    ['https://[::ffff:127.0.0.1]:PORT/', 'non_public_address'],
    ['https://2130706433:PORT/', 'non_public_address'],
    ['https://localhost:PORT/', 'non_public_address'],
  ])('refuses %s when not allow-listed, before connecting', async (template, reason) => {
    // Prepare
    const target = await receiver(reply(200));
    const { body, headers } = signed();

    // Act
    const result = await client.post({
      url: template.replace('PORT', String(target.port)),
      headers,
      body,
      allowed: new Set(),
    });

    // Assess
    expect(result).toMatchObject({ ok: false, status: null, error: reason });
    expect(target.connections).toBe(0);
  });

  it('refuses a DNS-rebinding host at connect time, after the target check admitted it', async () => {
    // Prepare: public on the first answer (the target check), loopback ever after
    const target = await receiver(reply(200));
    const answers: string[][] = [];
    const rebinding: HostLookup = async () => {
      const answer = answers.length === 0 ? ['93.184.216.34'] : ['127.0.0.1'];
      answers.push(answer);
      return answer;
    };
    const url = `https://rebind.test:${target.port}/hooks`;
    const rebindingClient = createWebhookClient({ lookup: rebinding });
    const { body, headers } = signed();

    try {
      // Act
      const admitted = await checkTarget(url, { allowed: new Set(), lookup: rebinding });
      const result = await rebindingClient.post({ url, headers, body, allowed: new Set() });

      // Assess
      expect(admitted).toMatchObject({ ok: true, allowedOverride: false });
      expect(result).toMatchObject({ ok: false, status: null, error: 'non_public_address' });
      expect(answers.length).toBeGreaterThanOrEqual(2);
      expect(target.connections).toBe(0);
    } finally {
      await rebindingClient.close();
    }
  });

  it('refuses at connect time when any one resolved address is not public (postWebhook with lookup)', async () => {
    const target = await receiver(reply(200));
    const mixed: HostLookup = async () => ['93.184.216.34', '127.0.0.1'];
    const { body, headers } = signed();

    const result = await postWebhook({
      url: `https://mixed.test:${target.port}/`,
      headers,
      body,
      allowed: new Set(),
      lookup: mixed,
    });

    expect(result).toMatchObject({ ok: false, status: null, error: 'non_public_address' });
    expect(target.connections).toBe(0);
  });
});

describe('webhook client connections and bounds', () => {
  it('reuses one connection for consecutive deliveries to the same endpoint', async () => {
    const target = await receiver(reply(200));
    const allowed = parseAllowedTargets(target.hostPort);

    for (let i = 0; i < 3; i++) {
      const { body, headers } = signed();
      const result = await client.post({ url: `http://${target.hostPort}/`, headers, body, allowed });
      expect(result).toMatchObject({ ok: true, status: 200 });
    }

    expect(target.requests).toHaveLength(3);
    expect(target.connections).toBe(1);
  });

  it('stops reading an endless response body without waiting for the timeout', async () => {
    // Prepare: a 200 whose body never ends
    const target = await receiver((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(16 * 1024, 0x61);
      const pump = () => {
        while (!response.destroyed && response.write(chunk));
        if (!response.destroyed) response.once('drain', pump);
      };
      pump();
    });
    const { body, headers } = signed();

    // Act
    const result = await client.post({
      url: `http://${target.hostPort}/`,
      headers,
      body,
      timeoutMs: 5_000,
      allowed: parseAllowedTargets(target.hostPort),
    });

    // Assess: the status decides, and the read ended long before the deadline
    expect(result).toMatchObject({ ok: true, status: 200, error: null });
    expect(result.durationMs).toBeLessThan(2_000);
  });

  it('times out a response body that trickles past the deadline, keeping its status', async () => {
    const target = await receiver((_request, response) => {
      response.writeHead(200);
      const timer = setInterval(() => response.write('.'), 50);
      response.on('close', () => clearInterval(timer));
    });
    const { body, headers } = signed();

    const result = await client.post({
      url: `http://${target.hostPort}/`,
      headers,
      body,
      timeoutMs: 300,
      allowed: parseAllowedTargets(target.hostPort),
    });

    expect(result).toMatchObject({ ok: false, status: 200, error: 'timeout' });
    expect(result.durationMs).toBeLessThan(1_500);
  });

  it.each([
    ['IPv4-mapped loopback', ['::ffff:127.0.0.1']],
    ['the metadata service', ['169.254.169.254']],
    ['IPv6 loopback', ['::1']],
  ])('refuses a name resolving to %s at connect time, and stays usable', async (_what, addresses) => {
    // Prepare
    const target = await receiver(reply(200));
    const lookup: HostLookup = async () => addresses;
    const guarded = createWebhookClient({ lookup });
    const { body, headers } = signed();

    try {
      // Act
      const refused = await guarded.post({
        url: `https://internal.test:${target.port}/`,
        headers,
        body,
        allowed: new Set(),
      });
      const connectionsWhenRefused = target.connections;
      const allowedAfter = await guarded.post({
        url: `http://${target.hostPort}/`,
        headers,
        body,
        allowed: parseAllowedTargets(target.hostPort),
      });

      // Assess
      expect(refused).toMatchObject({ ok: false, status: null, error: 'non_public_address' });
      expect(connectionsWhenRefused).toBe(0);
      expect(allowedAfter).toMatchObject({ ok: true, status: 200 });
      expect(target.requests).toHaveLength(1);
    } finally {
      await guarded.close();
    }
  });

  it('reports a name that does not resolve as unresolvable', async () => {
    const lookup: HostLookup = async (host) => {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    };
    const { body, headers } = signed();

    const result = await postWebhook({
      url: 'https://nowhere.test/',
      headers,
      body,
      allowed: new Set(),
      lookup,
    });

    expect(result).toMatchObject({ ok: false, status: null, error: 'unresolvable' });
  });
});
