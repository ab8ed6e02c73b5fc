/**
 * The typed client of the Customer Conversation Service API. The types (`./schema.js`) are generated
 * from the service's OpenAPI document by openapi-typescript (`npm run openapi:export` in the
 * service's repository) and requests go through openapi-fetch; this file adds only what a generator
 * cannot know: the credential headers, an `Idempotency-Key` on every POST, bounded retries of 429
 * and 503 that honour `Retry-After`, iterators over cursor and offset pages, `If-Match` from a
 * resource's `version`, and webhook verification (Standard Webhooks).
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { Webhook } from 'standardwebhooks';
import type { components, paths, webhooks } from './schema.js';

export type { components, paths, webhooks };
/** Every schema of the document by name: `Schemas['Conversation']`, `Schemas['Message']`, … */
export type Schemas = components['schemas'];

/** The API version (the document's `info.version`) this client was generated from. */
export const API_VERSION = '0.1.0';

export interface ServiceClientOptions {
  /** Where the API is served: `http://localhost:3000` locally, the stage URL in AWS. Paths start with `/api`. */
  baseUrl: string;
  /** An organization API key (`svc_sk_…`). Sent as `X-API-Key`, or as a bearer token with `apiKeyHeader: 'authorization'`. */
  apiKey?: string;
  apiKeyHeader?: 'x-api-key' | 'authorization';
  /** An operator session, visitor or platform admin token (`svc_os_…`, `svc_vt_…`, `svc_pa_…`): `Authorization: Bearer`. */
  token?: string;
  /** How many times a 429 or 503 is tried again (default 3; 0 turns retries off). */
  maxRetries?: number;
  /** The longest wait before a retry, whatever `Retry-After` says (default 20 000 ms). */
  maxRetryDelayMs?: number;
  /** The fetch to use (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
  /** Makes the `Idempotency-Key` of a POST that has none (default: a random UUID). */
  idempotencyKey?: () => string;
}

/** The openapi-fetch client, typed by the document, with the iterators below. */
export type ServiceClient = Client<paths> & {
  /** Every item of a cursor listing (`{ data, nextCursor }`), page after page. */
  paginate: typeof paginate;
  /** Every item of an offset listing (`{ data, pagination }`), page after page. */
  paginateOffset: typeof paginateOffset;
};

const RETRIED_STATUSES = new Set([429, 503]);

/** `Retry-After` in milliseconds (seconds or an HTTP date), or undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * A fetch that tries a 429 or 503 again after `Retry-After` (or a growing pause when absent), at
 * most `maxRetries` times, never waiting longer than `maxRetryDelayMs` at once. The request is sent
 * unchanged, its `Idempotency-Key` included, so a retried POST is not applied twice.
 */
export function retryingFetch(
  base: (request: Request) => Promise<Response>,
  maxRetries: number,
  maxRetryDelayMs: number,
): (request: Request) => Promise<Response> {
  return async (request) => {
    for (let attempt = 0; ; attempt++) {
      const response = await base(attempt < maxRetries ? request.clone() : request);
      if (!RETRIED_STATUSES.has(response.status) || attempt >= maxRetries) return response;
      const wait = retryAfterMs(response.headers.get('retry-after')) ?? 250 * 2 ** attempt;
      await response.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, Math.min(wait, maxRetryDelayMs)));
    }
  };
}

function credentials(options: ServiceClientOptions): Record<string, string> {
  if (options.apiKey && options.token)
    throw new Error('Give either apiKey or token: the API refuses both (401)');
  if (options.apiKey)
    return options.apiKeyHeader === 'authorization'
      ? { Authorization: `Bearer ${options.apiKey}` }
      : { 'X-API-Key': options.apiKey };
  if (options.token) return { Authorization: `Bearer ${options.token}` };
  return {};
}

const idempotency = (make: () => string): Middleware => ({
  onRequest({ request }) {
    if (request.method === 'POST' && !request.headers.has('Idempotency-Key'))
      request.headers.set('Idempotency-Key', make());
    return request;
  },
});

export function createServiceClient(options: ServiceClientOptions): ServiceClient {
  const base = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const client = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: credentials(options),
    fetch: retryingFetch(base, options.maxRetries ?? 3, options.maxRetryDelayMs ?? 20_000),
  });
  client.use(idempotency(options.idempotencyKey ?? (() => crypto.randomUUID())));
  return Object.assign(client, { paginate, paginateOffset });
}

/** The `If-Match` header that writes only over this version of the resource (412 otherwise). */
export function ifMatch(resource: { version: number }): { 'If-Match': string } {
  return { 'If-Match': `"${resource.version}"` };
}

type GetPath = { [P in keyof paths]: paths[P] extends { get: object } ? P : never }[keyof paths];
type OkBody<P extends GetPath> = paths[P]['get'] extends {
  responses: { 200: { content: { 'application/json': infer B } } };
}
  ? B
  : never;
type Params<P extends GetPath> = paths[P]['get'] extends { parameters: infer R } ? R : never;
type ItemOf<B> = B extends { data: (infer T)[] } ? T : never;
/** GET paths answering a cursor page, and those answering an offset page. */
export type CursorPath = {
  [P in GetPath]: OkBody<P> extends { data: unknown[]; nextCursor: string | null } ? P : never;
}[GetPath];
export type OffsetPath = {
  [P in GetPath]: OkBody<P> extends { data: unknown[]; pagination: { hasNextPage: boolean } } ? P : never;
}[GetPath];

type PageRequest<P extends GetPath> = {
  params?: {
    path?: Params<P> extends { path?: infer A } ? A : never;
    query?: Params<P> extends { query?: infer Q } ? Q : never;
  };
};

/** Raised by the iterators when a page answers an error: the status and the API's error body. */
export class ServiceApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`The API answered ${status}: ${JSON.stringify(body)}`);
    this.name = 'ServiceApiError';
  }
}

type LooseGet = (
  path: string,
  init: { params?: { path?: unknown; query?: Record<string, unknown> } },
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

interface LoosePageRequest {
  params?: { path?: unknown; query?: unknown };
}

async function fetchPage(client: Client<paths>, path: string, init: LoosePageRequest, query: object) {
  // The path is one of the typed GET paths; the page's query is that path's own plus the position.
  const get = client.GET as unknown as LooseGet;
  const { data, error, response } = await get(path, {
    params: { ...init.params, query: { ...(init.params?.query as object | undefined), ...query } },
  });
  if (data === undefined) throw new ServiceApiError(response.status, error);
  return data;
}

/**
 * Every item of a cursor listing, following `nextCursor` until it is null. For the events feed,
 * whose cursor stays a string at its end, it stops at the page marked `done` (keep that page's
 * cursor to poll later: see `paginate`'s `onCursor`).
 */
async function* paginate<P extends CursorPath>(
  this: Client<paths>,
  path: P,
  init: PageRequest<P> & { onCursor?: (cursor: string) => void } = {},
): AsyncGenerator<ItemOf<OkBody<P>>> {
  let cursor: string | null | undefined;
  do {
    const page = (await fetchPage(this, path, init, cursor ? { cursor } : {})) as {
      data: ItemOf<OkBody<P>>[];
      nextCursor: string | null;
      done?: boolean;
    };
    yield* page.data;
    cursor = page.nextCursor;
    if (cursor) init.onCursor?.(cursor);
    if (page.done) return;
  } while (cursor);
}

/** Every item of an offset listing, `limit` at a time (default 100, the maximum), while `hasNextPage`. */
async function* paginateOffset<P extends OffsetPath>(
  this: Client<paths>,
  path: P,
  init: PageRequest<P> & { limit?: number } = {},
): AsyncGenerator<ItemOf<OkBody<P>>> {
  const limit = init.limit ?? 100;
  for (let offset = 0; ; offset += limit) {
    const page = (await fetchPage(this, path, init, { offset, limit })) as {
      data: ItemOf<OkBody<P>>[];
      pagination: { hasNextPage: boolean };
    };
    yield* page.data;
    if (!page.pagination.hasNextPage) return;
  }
}

type WebhookBody<K extends keyof webhooks> = webhooks[K]['post'] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;
/** The body of a webhook delivery: one of the document's `webhooks`, told apart by `type`. */
export type WebhookEvent = { [K in keyof webhooks]: WebhookBody<K> }[keyof webhooks];

/**
 * Verifies a webhook request (Standard Webhooks: `webhook-id`, `webhook-timestamp`,
 * `webhook-signature`) with the endpoint's secret (`whsec_…`) and returns its event. Give the raw
 * body exactly as received. Throws when the signature is wrong or the timestamp is more than five
 * minutes away (a replay).
 */
export function verifyWebhook(
  secret: string,
  rawBody: string | Buffer,
  headers: Record<string, string | string[] | undefined> | Headers,
): WebhookEvent {
  const flat: Record<string, string> = {};
  if (headers instanceof Headers)
    headers.forEach((value, name) => {
      flat[name] = value;
    });
  else
    for (const [name, value] of Object.entries(headers))
      if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  return new Webhook(secret).verify(rawBody, flat) as WebhookEvent;
}
