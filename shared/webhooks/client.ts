import type { LookupAddress, LookupOptions } from 'node:dns';
import type { ClientRequest, Agent as HttpAgent, IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { checkTargetUrl, type HostLookup, isPublicAddress, resolvePublic, systemLookup } from './targets';

/** Not an ES import: on Node 22 that loads undici at module load (docs/decisions.md, "node:http and ICU at import"). */
const http = process.getBuiltinModule('node:http');

/**
 * Webhook delivery over HTTP, with Node's own `https`/`http` clients (no dependency). The target
 * check at create time is not enough: DNS can answer a public address then and 127.0.0.1 now
 * (rebinding), so the address check runs again inside the socket's own DNS lookup on every
 * connection, on the very addresses connected to (the guarded agent's `lookup`, which request
 * options cannot override: an agent's options win over a request's). IP-literal hosts never reach
 * a lookup, so the guarded agent checks those itself before opening a socket. Redirects are never
 * followed (Node's client has no redirect support at all): a 3xx is a failure, otherwise a public
 * endpoint could bounce us to the metadata service.
 */

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** The whole exchange, connect to last body byte; a 2xx later than this is still a failure. */
  timeoutMs?: number;
  /** `host:port` targets admitted over http and without any address check (development and tests). */
  allowed: ReadonlySet<string>;
}

export interface WebhookResult {
  ok: boolean;
  status: number | null;
  durationMs: number;
  error: string | null;
}

export interface WebhookClient {
  post(request: WebhookRequest): Promise<WebhookResult>;
  /** Any other outbound call under the same guard (chat-channel and AI-provider APIs), body kept. */
  request(request: GuardedRequest): Promise<GuardedResponse>;
  close(): Promise<void>;
}

/** An outbound call whose answer matters (not only its status), under the webhooks' target guard. */
export interface GuardedRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string;
  timeoutMs?: number;
  /** `host:port` targets admitted over http and without any address check. */
  allowed: ReadonlySet<string>;
  /** The response body is kept up to this many bytes; a longer one fails (`response_too_large`). */
  maxResponseBytes?: number;
}

export interface GuardedResponse {
  /** Null when no response arrived (refused target, network error, timeout before the head). */
  status: number | null;
  headers: Record<string, string | string[] | undefined>;
  /** The body as UTF-8 text, empty when the exchange failed. */
  body: string;
  durationMs: number;
  /** Null when a whole response (of any status but a redirect) arrived; else what went wrong. */
  error: string | null;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_ERROR_LENGTH = 500;
/**
 * Response bytes read at most. The body is never kept; it is read to its end so the connection can
 * be reused, but a receiver answering more than this loses its connection instead (the status is
 * already known, so the result is the same). The deadline bounds the time, this the bytes.
 */
const MAX_RESPONSE_BYTES = 64 * 1024;
/** What `request` keeps of a response body by default. */
const MAX_KEPT_BYTES = 256 * 1024;
/** Idle pooled connections are closed after this (undici's default keep-alive timeout). */
const IDLE_SOCKET_MS = 4_000;
/** Our own code on the refusal, so it is told apart from the resolver's errors in `describeError`. */
const NON_PUBLIC_CODE = 'ERR_WEBHOOK_NON_PUBLIC_ADDRESS';

class NonPublicAddressError extends Error {
  readonly code = NON_PUBLIC_CODE;
  constructor(host: string) {
    super(`non_public_address: ${host}`);
    this.name = 'NonPublicAddressError';
  }
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** A `dns.lookup`-shaped hook for net/tls.connect that only ever hands back public addresses. */
function guardedLookup(lookup: HostLookup) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolvePublic(hostname, lookup).then(
      (result) => {
        if (!result.ok) {
          const error: NodeJS.ErrnoException =
            result.reason === 'non_public_address'
              ? new NonPublicAddressError(hostname)
              : Object.assign(new Error(`unresolvable: ${hostname}`), { code: 'ENOTFOUND' });
          callback(error, '');
          return;
        }
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
        const entries = result.addresses
          .map((address) => ({ address, family: isIP(address) }))
          .filter((entry) => !family || entry.family === family);
        const first = entries[0];
        if (!first)
          callback(Object.assign(new Error(`unresolvable: ${hostname}`), { code: 'ENOTFOUND' }), '');
        // Node asks for `all` when it races both families (autoSelectFamily, on by default since 20).
        else if (options.all) callback(null, entries);
        else callback(null, first.address, first.family);
      },
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), ''),
    );
  };
}

type ConnectCallback = (error: Error | null, socket: Duplex) => void;

/**
 * HTTPS only, every address checked: names through the guarded lookup, IP literals (which skip any
 * lookup) here, before a socket exists. A refusal fails the request with NonPublicAddressError.
 */
class GuardedAgent extends HttpsAgent {
  constructor(lookup: HostLookup) {
    super({ keepAlive: true, timeout: IDLE_SOCKET_MS, lookup: guardedLookup(lookup) });
  }

  override createConnection(options: RequestOptions, callback?: ConnectCallback): Duplex | null | undefined {
    const host = options.host ?? options.hostname ?? '';
    if (isIP(host) !== 0 && !isPublicAddress(host)) {
      const refusal = new NonPublicAddressError(host);
      if (!callback) throw refusal;
      // No socket: the agent hands the error to the request, which fails with it.
      (callback as (error: Error) => void)(refusal);
      return undefined;
    }
    return super.createConnection(options, callback);
  }
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

function describeError(error: unknown): string {
  const code = errorCode(error);
  const cause = error instanceof Error ? errorCode(error.cause) : undefined;
  switch (code ?? cause) {
    case NON_PUBLIC_CODE:
      return 'non_public_address';
    case 'ECONNREFUSED':
      return 'connection_refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'unresolvable';
    case 'ETIMEDOUT':
      return 'timeout';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'connection_closed';
  }
  const message = error instanceof Error ? error.message : String(error);
  return code ? `${code}: ${message}` : message || 'request_failed';
}

/** How one exchange ended: the status if a response head arrived, and what went wrong if anything. */
interface Exchange {
  status: number | null;
  /** Undefined when the response was read to its end (or up to MAX_RESPONSE_BYTES). */
  failure?: 'timeout' | 'response_too_large' | { error: unknown };
  /** The response head's headers and, when asked to keep it, its body. */
  headers?: IncomingMessage['headers'];
  body?: Buffer;
}

/** What `exchange` sends, and whether it keeps the response body (at most `keepBytes`). */
interface ExchangeInput {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string | undefined;
  keepBytes?: number;
}

/**
 * One request, event-driven: sends the body, reads the response to its end (so the connection can
 * be reused) without keeping it unless asked, at most MAX_RESPONSE_BYTES or `keepBytes` (then the
 * connection is dropped), and gives up at the deadline, connect to last byte, destroying the request
 * and its socket.
 */
function exchange(url: URL, input: ExchangeInput, agent: HttpAgent, timeoutMs: number): Promise<Exchange> {
  return new Promise((resolve) => {
    let status: number | null = null;
    let headers: IncomingMessage['headers'] | undefined;
    const kept: Buffer[] | undefined = input.keepBytes === undefined ? undefined : [];
    let settled = false;
    const settle = (failure?: Exchange['failure']) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const result: Exchange = failure === undefined ? { status } : { status, failure };
      if (headers) result.headers = headers;
      if (kept) result.body = Buffer.concat(kept);
      resolve(result);
    };
    let request: ClientRequest;
    const body = input.body;
    try {
      request = (url.protocol === 'https:' ? httpsRequest : http.request)(url, {
        method: input.method,
        headers:
          body === undefined
            ? input.headers
            : { ...input.headers, 'content-length': Buffer.byteLength(body) },
        agent,
      });
    } catch (error) {
      resolve({ status, failure: { error } });
      return;
    }
    const timer = setTimeout(() => {
      settle('timeout');
      request.destroy();
    }, timeoutMs);
    request.on('error', (error) => settle({ error }));
    request.on('response', (response: IncomingMessage) => {
      status = response.statusCode ?? null;
      headers = response.headers;
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (kept && input.keepBytes !== undefined) {
          if (read > input.keepBytes) {
            settle('response_too_large');
            response.destroy();
            return;
          }
          kept.push(chunk);
        } else if (read > MAX_RESPONSE_BYTES) {
          settle();
          response.destroy();
        }
      });
      response.on('end', () => settle());
      response.on('error', (error) => settle({ error }));
      // Closed before its end (the server reset the connection mid-body).
      response.on('close', () => {
        if (!response.complete)
          settle({ error: Object.assign(new Error('aborted'), { code: 'ECONNRESET' }) });
      });
    });
    request.end(body);
  });
}

/**
 * A client with its own connection pools. `lookup` replaces the system resolver (tests, or a
 * resolver with its own cache); allow-listed targets go through separate, unchecked pools so an
 * allow-list never weakens the guarded one.
 */
export function createWebhookClient(options: { lookup?: HostLookup } = {}): WebhookClient {
  const guarded = new GuardedAgent(options.lookup ?? systemLookup);
  const openHttp = new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS });
  const openHttps = new HttpsAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS });

  async function post(input: WebhookRequest): Promise<WebhookResult> {
    const started = performance.now();
    const finish = (status: number | null, error: string | null): WebhookResult => ({
      ok: error === null,
      status,
      durationMs: Math.round(performance.now() - started),
      error: error === null ? null : error.slice(0, MAX_ERROR_LENGTH),
    });

    const target = checkTargetUrl(input.url, input.allowed);
    if (!target.ok) return finish(null, target.reason);
    const agent = !target.allowedOverride ? guarded : target.url.protocol === 'https:' ? openHttps : openHttp;

    const { status, failure } = await exchange(
      target.url,
      { method: 'POST', headers: input.headers, body: input.body },
      agent,
      input.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    );
    if (failure === 'timeout' || failure === 'response_too_large') return finish(status, failure);
    if (failure) return finish(status, describeError(failure.error));
    if (status !== null && status >= 200 && status < 300) return finish(status, null);
    if (status !== null && status >= 300 && status < 400) return finish(status, 'redirect_not_followed');
    return finish(status, `http_${status}`);
  }

  async function request(input: GuardedRequest): Promise<GuardedResponse> {
    const started = performance.now();
    const finish = (
      exchanged: Pick<Exchange, 'status' | 'headers' | 'body'>,
      error: string | null,
    ): GuardedResponse => ({
      status: exchanged.status,
      headers: exchanged.headers ?? {},
      body: error === null ? (exchanged.body?.toString('utf8') ?? '') : '',
      durationMs: Math.round(performance.now() - started),
      error: error === null ? null : error.slice(0, MAX_ERROR_LENGTH),
    });
    const target = checkTargetUrl(input.url, input.allowed);
    if (!target.ok) return finish({ status: null }, target.reason);
    const agent = !target.allowedOverride ? guarded : target.url.protocol === 'https:' ? openHttps : openHttp;
    const exchanged = await exchange(
      target.url,
      {
        method: input.method,
        headers: input.headers,
        body: input.body,
        keepBytes: input.maxResponseBytes ?? MAX_KEPT_BYTES,
      },
      agent,
      input.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    );
    const { failure } = exchanged;
    if (failure === 'timeout' || failure === 'response_too_large') return finish(exchanged, failure);
    if (failure) return finish(exchanged, describeError(failure.error));
    if (exchanged.status !== null && exchanged.status >= 300 && exchanged.status < 400)
      return finish(exchanged, 'redirect_not_followed');
    return finish(exchanged, null);
  }

  return {
    post,
    request,
    async close() {
      guarded.destroy();
      openHttp.destroy();
      openHttps.destroy();
    },
  };
}

/** Module-scope clients: a warm Lambda reuses their connections across deliveries. */
const defaultClient = createWebhookClient();
const clientsByLookup = new WeakMap<HostLookup, WebhookClient>();

/** An outbound call under the webhooks' target guard (module-scope pools, like `postWebhook`). */
export function guardedRequest(input: GuardedRequest): Promise<GuardedResponse> {
  return defaultClient.request(input);
}

export function postWebhook(input: WebhookRequest & { lookup?: HostLookup }): Promise<WebhookResult> {
  const { lookup, ...rest } = input;
  if (!lookup) return defaultClient.post(rest);
  let client = clientsByLookup.get(lookup);
  if (!client) {
    client = createWebhookClient({ lookup });
    clientsByLookup.set(lookup, client);
  }
  return client.post(rest);
}
