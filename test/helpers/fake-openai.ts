import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local OpenAI-compatible API (`POST …/chat/completions`) for the tests and the bench. The model
 * name picks the behaviour, so parallel test files need no shared state:
 * - `long-<n>`: replies with <n> characters (`é` repeated: two bytes each, one character);
 * - `status-<code>`: answers that status with an OpenAI error whose message echoes the bearer key
 *   (as some providers do), so tests can check it is never passed on;
 * - `slow-<ms>`: answers "pong" after <ms> milliseconds;
 * - `redirect`: answers 302 to another place;
 * - `garbage`: answers 200 with a body that is not a completion;
 * - anything else: replies "pong".
 * `GET /__control/requests?model=<m>` lists what was received for that model (headers and body).
 */
export interface FakeOpenAi {
  baseUrl: string;
  close(): Promise<void>;
}

export interface ReceivedCompletion {
  path: string;
  authorization: string | undefined;
  body: { model?: string; messages?: unknown; max_tokens?: unknown };
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const completion = (model: string, content: string) => ({
  id: 'chatcmpl-fake',
  object: 'chat.completion',
  created: Math.floor(Date.now() / 1000),
  model,
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 },
});

export async function startFakeOpenAi(): Promise<FakeOpenAi> {
  const received: ReceivedCompletion[] = [];
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake');
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/json', ...headers });
      response.end(JSON.stringify(body));
    };
    if (url.pathname === '/__control/requests') {
      const model = url.searchParams.get('model');
      json(
        200,
        received.filter((entry) => entry.body.model === model),
      );
      return;
    }
    if (request.method !== 'POST' || !url.pathname.endsWith('/chat/completions')) {
      json(404, { error: { message: 'Not found', type: 'invalid_request_error' } });
      return;
    }
    let body: ReceivedCompletion['body'] = {};
    try {
      body = JSON.parse(await readBody(request)) as ReceivedCompletion['body'];
    } catch {
      json(400, { error: { message: 'Invalid JSON', type: 'invalid_request_error' } });
      return;
    }
    received.push({ path: url.pathname, authorization: request.headers.authorization, body });
    const model = String(body.model ?? '');
    const long = /^long-(\d+)$/.exec(model);
    const status = /^status-(\d{3})$/.exec(model);
    const slow = /^slow-(\d+)$/.exec(model);
    if (long?.[1]) return json(200, completion(model, 'é'.repeat(Number(long[1]))));
    if (status?.[1]) {
      const key = (request.headers.authorization ?? '').replace(/^Bearer /, '');
      return json(Number(status[1]), {
        error: { message: `Incorrect API key provided: ${key}`, type: 'invalid_request_error' },
      });
    }
    if (model === 'redirect') {
      response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
      response.end();
      return;
    }
    if (model === 'garbage') return json(200, { hello: 'world' });
    if (slow?.[1]) await new Promise((resolve) => setTimeout(resolve, Number(slow[1])));
    if (response.destroyed) return;
    json(200, completion(model, 'pong'));
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

export async function receivedCompletions(baseUrl: string, model: string): Promise<ReceivedCompletion[]> {
  const response = await fetch(`${baseUrl}/__control/requests?model=${encodeURIComponent(model)}`);
  return (await response.json()) as ReceivedCompletion[];
}
