import { inject } from 'vitest';

export interface ApiResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface CallOptions {
  token?: string | undefined;
  headers?: Record<string, string>;
  body?: unknown;
  /** Sent as-is, for malformed or oversized bodies. */
  rawBody?: string;
}

let baseUrlOverride: string | undefined;
/** Every gateway this test file has called: their answers are held to the OpenAPI document. */
const gatewayOrigins = new Set<string>();

/** Points this test file's calls at another gateway (an in-process stack with its own clock). */
export function useBaseUrl(url: string): void {
  baseUrlOverride = url;
  gatewayOrigins.add(new URL(url).origin);
}

/** Whether a URL is the service's: the shared stack's gateway, or one this file started. */
export const isServiceUrl = (url: URL): boolean =>
  url.origin === new URL(inject('baseUrl')).origin || gatewayOrigins.has(url.origin);

/** One HTTP call to the local gateway, as an integrator would make it. */
export async function call<T = Record<string, unknown>>(
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['Content-Type'] ??= 'application/json';
  }
  const url = `${baseUrlOverride ?? inject('baseUrl')}${path}`;
  let response = await fetch(url, { method, headers, body });
  // The whole suite shares one platform admin credential and so one per-minute budget: setup calls
  // made with it wait out a 429 as a well-behaved client would, instead of failing a test at random.
  // Tests of the limit itself use their own credentials, which are never retried.
  for (
    let retries = 0;
    response.status === 429 && options.token === platformToken() && retries < 2;
    retries++
  ) {
    const waitSeconds = Number(response.headers.get('retry-after') ?? '1');
    await response.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, Math.min(60, Math.max(1, waitSeconds)) * 1000));
    response = await fetch(url, { method, headers, body });
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

export interface Tenant {
  orgId: string;
  widgetKey: string;
  apiKey: string;
  adminSession: string;
  adminOperatorId: string;
  operatorSession: string;
  operatorId: string;
}

export const platformToken = (): string => inject('platformAdminToken');

function expectStatus<T>(response: ApiResponse<T>, status: number, what: string): ApiResponse<T> {
  if (response.status !== status)
    throw new Error(`${what}: expected ${status}, got ${response.status} ${response.text}`);
  return response;
}

/** A fresh organization with the API module, an unrestricted key, an admin and an operator session. */
export async function createTenant(
  options: { modules?: string[]; historyWindowDays?: number | null } = {},
): Promise<Tenant> {
  const admin = platformToken();
  const org = expectStatus(
    await call<{ id: string; widgetKey: string }>('POST', '/api/admin/organizations', {
      token: admin,
      body: {
        name: 'Test org',
        modules: options.modules ?? ['automation_api'],
        historyWindowDays: options.historyWindowDays ?? null,
      },
    }),
    201,
    'create organization',
  ).body;
  const key = expectStatus(
    await call<{ key: string }>('POST', `/api/admin/organizations/${org.id}/api-keys`, {
      token: admin,
      body: { name: 'test', scopes: [] },
    }),
    201,
    'create key',
  ).body;
  const session = async (role: 'admin' | 'operator') => {
    const operator = expectStatus(
      await call<{ id: string }>('POST', `/api/admin/organizations/${org.id}/operators`, {
        token: admin,
        body: { name: `${role} one`, email: `${role}-${crypto.randomUUID()}@example.com`, role },
      }),
      201,
      'create operator',
    ).body;
    const created = expectStatus(
      await call<{ token: string }>(
        'POST',
        `/api/admin/organizations/${org.id}/operators/${operator.id}/sessions`,
        { token: admin },
      ),
      201,
      'create session',
    ).body;
    return { operatorId: operator.id, token: created.token };
  };
  const adminSession = await session('admin');
  const operatorSession = await session('operator');
  return {
    orgId: org.id,
    widgetKey: org.widgetKey,
    apiKey: key.key,
    adminSession: adminSession.token,
    adminOperatorId: adminSession.operatorId,
    operatorSession: operatorSession.token,
    operatorId: operatorSession.operatorId,
  };
}

export async function createApiKey(orgId: string, scopes: string[]): Promise<{ id: string; key: string }> {
  return expectStatus(
    await call<{ id: string; key: string }>('POST', `/api/admin/organizations/${orgId}/api-keys`, {
      token: platformToken(),
      body: { name: 'scoped', scopes },
    }),
    201,
    'create key',
  ).body;
}

export async function createVisitor(widgetKey: string, body: Record<string, unknown> = {}) {
  return expectStatus(
    await call<{ visitor: { id: string }; token: string; expiresAt: string }>(
      'POST',
      '/api/widget/visitors',
      {
        headers: { 'X-Widget-Key': widgetKey },
        body,
      },
    ),
    201,
    'create visitor',
  ).body;
}
