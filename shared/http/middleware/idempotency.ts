import { createHash } from 'node:crypto';
import type { OrgCaller } from '../../auth/caller';
import { idempotency as records } from '../../db/idempotency';
import { ConflictError, ValidationError } from '../../errors';
import type { HttpMiddleware, HttpRequest, HttpResult } from '../context';

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
const REPLAY_HEADER = 'Idempotent-Replayed';

interface Pending {
  orgId: string;
  key: string;
  fingerprint: string;
}

const pendingByRequest = new WeakMap<object, Pending>();

async function claim(request: HttpRequest, key: string, caller: OrgCaller): Promise<void> {
  if (!KEY_PATTERN.test(key)) {
    throw ValidationError.field(
      'Idempotency-Key',
      'Idempotency-Key must be 1 to 255 visible ASCII characters',
    );
  }
  const fingerprint = createHash('sha256')
    .update(
      `${request.event.httpMethod} ${request.event.path}\n${caller.credentialId}\n${request.event.body ?? ''}`,
    )
    .digest('base64url');
  const claimed = await records.claim(caller.orgId, key, fingerprint);
  if (claimed.outcome === 'mismatch') {
    throw new ConflictError('This Idempotency-Key was already used with another request', {
      reason: 'idempotency_key_reused',
    });
  }
  if (claimed.outcome === 'in_progress') {
    throw new ConflictError('A request with this Idempotency-Key is still in progress', {
      reason: 'idempotency_in_progress',
    });
  }
  if (claimed.outcome === 'replay') {
    request.context.state.replay = {
      ...claimed.response,
      headers: { ...claimed.response.headers, [REPLAY_HEADER]: 'true' },
    };
    return;
  }
  pendingByRequest.set(request, { orgId: caller.orgId, key, fingerprint });
}

async function complete(pending: Pending, response: HttpResult): Promise<void> {
  // A streamed answer (an export) is not kept: it is not idempotent, and would not fit an item.
  if (response.statusCode >= 500 || typeof response.body !== 'string') {
    await records.release(pending.orgId, pending.key);
    return;
  }
  // A replay reports the limits of its own moment: a route's RateLimit-* are not kept with it.
  const headers = Object.fromEntries(
    Object.entries(response.headers ?? {}).filter(
      ([name, value]) => typeof value === 'string' && !name.startsWith('RateLimit-'),
    ),
  ) as Record<string, string>;
  await records.complete(pending.orgId, pending.key, pending.fingerprint, {
    statusCode: response.statusCode,
    headers,
    body: response.body,
  });
}

/**
 * `Idempotency-Key` on a POST: the first answer the handler returns is kept 24 h and replayed byte
 * for byte with `Idempotent-Replayed: true`; the same key with another method, path or body is 409.
 * An error releases the key, so a corrected or retried request runs again. Requests without a key
 * pass synchronously.
 */
export const idempotency = (): HttpMiddleware => ({
  before: (request) => {
    const { state } = request.context;
    const key = state.headers['idempotency-key'];
    const caller = state.caller;
    if (request.event.httpMethod !== 'POST' || key === undefined || !caller || !('orgId' in caller)) return;
    return claim(request, key, caller);
  },
  after: (request) => {
    const pending = pendingByRequest.get(request);
    const response = request.response;
    if (!pending || !response) return;
    return complete(pending, response);
  },
  onError: (request) => {
    const pending = pendingByRequest.get(request);
    if (pending) return records.release(pending.orgId, pending.key);
  },
});
