import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for Discord's REST API, for the tests and the bench: `GET /channels/{id}` and
 * `POST /channels/{id}/messages` with `Authorization: Bot <token>`, Discord's error shapes, 429s with
 * `retry_after`, and `enforce_nonce`. Tests run in other processes than the one that starts it, so
 * they script it over HTTP: `PUT /__control/channels/{id}` registers a channel and its behaviour,
 * `GET /__control/channels/{id}` returns what was posted to it (every attempt, and the messages).
 */
export interface FakeChannel {
  name?: string;
  type?: number;
  /**
   * How a lookup answers: `ok` (the channel), `forbidden` (403, the bot may not see it), `error`
   * (500), `reset` (the connection is dropped: Discord unreachable). Unregistered channels are 404.
   */
  lookup?: 'ok' | 'forbidden' | 'error' | 'reset';
  /** The next posts answer 429 with these `retry_after` seconds, one each, in order. */
  rateLimits?: number[];
  /** The next this-many posts answer 500. */
  failures?: number;
}

export interface PostAttempt {
  at: number;
  status: number;
  authorization: string | undefined;
}

export interface PostedMessage {
  id: string;
  at: number;
  body: Record<string, unknown>;
}

export interface FakeDiscord {
  baseUrl: string;
  close(): Promise<void>;
}

interface ChannelState extends Required<Omit<FakeChannel, 'rateLimits'>> {
  rateLimits: number[];
  attempts: PostAttempt[];
  messages: PostedMessage[];
  nonces: Map<string, PostedMessage>;
}

function send(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

let sequence = 0n;
const snowflake = () => String(1_200_000_000_000_000_000n + ++sequence);

export async function startFakeDiscord(options: { token: string }): Promise<FakeDiscord> {
  const channels = new Map<string, ChannelState>();

  const server = createServer(async (request, response) => {
    try {
      const url = new URL(request.url ?? '/', 'http://fake');
      const control = /^\/__control\/channels\/(\d+)$/.exec(url.pathname);
      if (control?.[1]) {
        const id = control[1];
        if (request.method === 'PUT') {
          const given = JSON.parse((await readBody(request)) || '{}') as FakeChannel;
          channels.set(id, {
            name: given.name ?? `channel-${id.slice(-4)}`,
            type: given.type ?? 0,
            lookup: given.lookup ?? 'ok',
            rateLimits: [...(given.rateLimits ?? [])],
            failures: given.failures ?? 0,
            attempts: [],
            messages: [],
            nonces: new Map(),
          });
          send(response, 204, {});
          return;
        }
        const state = channels.get(id);
        send(response, 200, { attempts: state?.attempts ?? [], messages: state?.messages ?? [] });
        return;
      }

      const lookup = /^\/channels\/(\d+)$/.exec(url.pathname);
      const post = /^\/channels\/(\d+)\/messages$/.exec(url.pathname);
      const id = lookup?.[1] ?? post?.[1];
      if (!id) {
        send(response, 404, { message: '404: Not Found', code: 0 });
        return;
      }
      const authorized = request.headers.authorization === `Bot ${options.token}`;
      const state = channels.get(id);

      if (lookup && request.method === 'GET') {
        if (!authorized) return send(response, 401, { message: '401: Unauthorized', code: 0 });
        if (!state) return send(response, 404, { message: 'Unknown Channel', code: 10003 });
        if (state.lookup === 'reset') {
          request.socket.destroy();
          return;
        }
        if (state.lookup === 'forbidden')
          return send(response, 403, { message: 'Missing Access', code: 50001 });
        if (state.lookup === 'error')
          return send(response, 500, { message: 'Internal Server Error', code: 0 });
        return send(response, 200, {
          id,
          type: state.type,
          name: state.name,
          guild_id: '1100000000000000001',
        });
      }

      if (post && request.method === 'POST') {
        const text = await readBody(request);
        const attempt = (status: number) =>
          state?.attempts.push({ at: Date.now(), status, authorization: request.headers.authorization });
        if (!authorized) {
          attempt(401);
          return send(response, 401, { message: '401: Unauthorized', code: 0 });
        }
        if (!state) return send(response, 404, { message: 'Unknown Channel', code: 10003 });
        const retryAfter = state.rateLimits.shift();
        if (retryAfter !== undefined) {
          attempt(429);
          return send(
            response,
            429,
            { message: 'You are being rate limited.', retry_after: retryAfter, global: false },
            { 'retry-after': String(Math.ceil(retryAfter)), 'x-ratelimit-scope': 'user' },
          );
        }
        if (state.failures > 0) {
          state.failures -= 1;
          attempt(500);
          return send(response, 500, { message: 'Internal Server Error', code: 0 });
        }
        const body = JSON.parse(text) as Record<string, unknown>;
        const nonce = typeof body.nonce === 'string' ? body.nonce : undefined;
        const known = nonce && body.enforce_nonce === true ? state.nonces.get(nonce) : undefined;
        attempt(200);
        if (known) return send(response, 200, { id: known.id, channel_id: id });
        const message: PostedMessage = { id: snowflake(), at: Date.now(), body };
        state.messages.push(message);
        if (nonce) state.nonces.set(nonce, message);
        return send(response, 200, { id: message.id, channel_id: id });
      }
      send(response, 405, { message: '405: Method Not Allowed', code: 0 });
    } catch (error) {
      send(response, 500, { message: String(error) });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Test-side helpers: script the fake and read what it received, over its control endpoints. */
export const fakeDiscordControl = (baseUrl: string) => ({
  async channel(id: string, behaviour: FakeChannel = {}): Promise<void> {
    const response = await fetch(`${baseUrl}/__control/channels/${id}`, {
      method: 'PUT',
      body: JSON.stringify(behaviour),
    });
    if (response.status !== 204) throw new Error(`fake Discord: ${response.status}`);
  },
  async received(id: string): Promise<{ attempts: PostAttempt[]; messages: PostedMessage[] }> {
    const response = await fetch(`${baseUrl}/__control/channels/${id}`);
    return (await response.json()) as { attempts: PostAttempt[]; messages: PostedMessage[] };
  },
});

let channelSequence = 0;
/** A fresh snowflake-shaped channel id, unique across the test processes that share one fake. */
export function channelIdForTest(): string {
  const random = Math.floor(Math.random() * 1e9)
    .toString()
    .padStart(9, '0');
  return `13${String(process.pid % 10_000).padStart(4, '0')}${random}${String(++channelSequence % 1000).padStart(3, '0')}`;
}
