import { createHash } from 'node:crypto';
import { idempotency as records } from '../../db/idempotency';
import { ConflictError, ValidationError } from '../../errors';
import type { HttpMiddleware, HttpRequest } from '../context';

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
const REPLAY_HEADER = 'Idempotent-Replayed';

interface Pending {
  orgId: string;
  key: string;
  fingerprint: string;
}

const pendingByRequest = new WeakMap<object, Pending>();

/**
 * `Idempotency-Key` on a POST: the first answer the handler returns is kept 24 h and replayed byte
 * for byte with `Idempotent-Replayed: true`; the same key with another method, path or body is 409.
 * An error releases the key, so a corrected or retried request runs again.
 */
export const idempotency = (): HttpMiddleware => ({
  before: async (request) => {
    const { state } = request.context;
    const key = state.headers['idempotency-key'];
    const caller = state.caller;
    if (request.event.httpMethod !== 'POST' || key === undefined || !caller || !('orgId' in caller)) return;
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
    const claim = await records.claim(caller.orgId, key, fingerprint);
    if (claim.outcome === 'mismatch') {
      throw new ConflictError('This Idempotency-Key was already used with another request', {
        reason: 'idempotency_key_reused',
      });
    }
    if (claim.outcome === 'in_progress') {
      throw new ConflictError('A request with this Idempotency-Key is still in progress', {
        reason: 'idempotency_in_progress',
      });
    }
    if (claim.outcome === 'replay') {
      state.replay = { ...claim.response, headers: { ...claim.response.headers, [REPLAY_HEADER]: 'true' } };
      return;
    }
    pendingByRequest.set(request, { orgId: caller.orgId, key, fingerprint });
  },
  after: async (request) => {
    const pending = pendingByRequest.get(request);
    const response = request.response;
    if (!pending || !response) return;
    if (response.statusCode >= 500) {
      await records.release(pending.orgId, pending.key);
      return;
    }
    const headers = Object.fromEntries(
      Object.entries(response.headers ?? {}).filter(([, value]) => typeof value === 'string'),
    ) as Record<string, string>;
    await records.complete(pending.orgId, pending.key, pending.fingerprint, {
      statusCode: response.statusCode,
      headers,
      body: response.body,
    });
  },
  onError: async (request: HttpRequest) => {
    const pending = pendingByRequest.get(request);
    if (pending) await records.release(pending.orgId, pending.key);
  },
});
