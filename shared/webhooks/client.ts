import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, buildConnector, request } from 'undici';
import { checkTargetUrl, type HostLookup, isPublicAddress, resolvePublic, systemLookup } from './targets';

/**
 * Webhook delivery over HTTP. The target check at create time is not enough: DNS can answer a public
 * address then and 127.0.0.1 now (rebinding), so the address check runs again inside the socket's
 * own DNS lookup on every connection, on the very address connected to. Node's global fetch ignores
 * custom agents, hence undici `request` with our own Agent. IP-literal hosts never reach a lookup
 * hook, so the connector checks those itself. Redirects are never followed: a 3xx is a failure,
 * otherwise a public endpoint could bounce us to the metadata service.
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
  close(): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_ERROR_LENGTH = 500;
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

function guardedAgent(lookup: HostLookup): Agent {
  const connect = buildConnector({ lookup: guardedLookup(lookup) });
  return new Agent({
    connect(options, callback) {
      if (isIP(options.hostname) !== 0 && !isPublicAddress(options.hostname)) {
        callback(new NonPublicAddressError(options.hostname), null);
        return;
      }
      connect(options, callback);
    },
  });
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
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return 'timeout';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection_closed';
  }
  const message = error instanceof Error ? error.message : String(error);
  return code ? `${code}: ${message}` : message || 'request_failed';
}

/**
 * A client with its own connection pools. `lookup` replaces the system resolver (tests, or a
 * resolver with its own cache); allow-listed targets go through a separate, unchecked pool so an
 * allow-list never weakens the guarded one.
 */
export function createWebhookClient(options: { lookup?: HostLookup } = {}): WebhookClient {
  const guarded = guardedAgent(options.lookup ?? systemLookup);
  const open = new Agent();

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

    const timeoutMs = input.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new Error('timeout')), timeoutMs);
    let status: number | null = null;
    try {
      const response = await request(target.url, {
        method: 'POST',
        headers: input.headers,
        body: input.body,
        dispatcher: target.allowedOverride ? open : guarded,
        signal: deadline.signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      status = response.statusCode;
      // Read to the end (never buffered) so the connection can be reused; the deadline bounds it.
      for await (const _chunk of response.body);
      if (status >= 200 && status < 300) return finish(status, null);
      if (status >= 300 && status < 400) return finish(status, 'redirect_not_followed');
      return finish(status, `http_${status}`);
    } catch (error) {
      return finish(status, deadline.signal.aborted ? 'timeout' : describeError(error));
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    post,
    async close() {
      await Promise.all([guarded.close(), open.close()]);
    },
  };
}

/** Module-scope clients: a warm Lambda reuses their connections across deliveries. */
const defaultClient = createWebhookClient();
const clientsByLookup = new WeakMap<HostLookup, WebhookClient>();

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
