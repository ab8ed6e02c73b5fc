import { createHmac, timingSafeEqual } from 'node:crypto';
import { verificationKeys } from '../cursor-key-ring';
import { cursorKeys } from '../cursor-keys';
import { BadRequestError } from '../errors';

/**
 * Opaque pagination cursors: the DynamoDB start key, bound to the organization and to the query
 * that produced it (listing + filters), signed with HMAC-SHA256. A forged, altered or foreign
 * cursor is 400, never a read of someone else's partition.
 */
type StartKey = Record<string, unknown>;

function sign(payload: string, key: string): Buffer {
  return createHmac('sha256', key).update(payload).digest();
}

/** Signed by any key of the ring (a rotation keeps cursors valid: shared/cursor-key-ring.ts). */
function signedByRing(payload: string, signature: string): boolean {
  const given = Buffer.from(signature);
  return verificationKeys(cursorKeys.keys()).some((key) => {
    // Compare the canonical text, not decoded bytes: base64url decoding tolerates altered padding.
    const expected = Buffer.from(sign(payload, key).toString('base64url'));
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

export function encodeCursor(orgId: string, queryId: string, startKey: StartKey): string {
  const payload = Buffer.from(JSON.stringify({ o: orgId, q: queryId, k: startKey })).toString('base64url');
  return `${payload}.${sign(payload, cursorKeys.keys().current).toString('base64url')}`;
}

/** The contract's 400 for a cursor that is malformed, altered or from another listing or organization. */
export const malformedCursor = (): BadRequestError =>
  new BadRequestError('The cursor is malformed, altered or belongs to another listing', { field: 'cursor' });

export function decodeCursor(cursor: string, orgId: string, queryId: string): StartKey {
  const invalid = malformedCursor();
  const [payload, signature, extra] = cursor.split('.');
  if (!payload || !signature || extra !== undefined) throw invalid;
  if (!signedByRing(payload, signature)) throw invalid;
  let decoded: { o?: unknown; q?: unknown; k?: unknown };
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw invalid;
  }
  if (decoded.o !== orgId || decoded.q !== queryId || typeof decoded.k !== 'object' || decoded.k === null)
    throw invalid;
  return decoded.k as StartKey;
}
