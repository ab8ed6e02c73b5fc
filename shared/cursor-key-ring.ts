import { randomBytes } from 'node:crypto';

/**
 * The HMAC keys of pagination cursors, as the secret holds them (JSON). Cursors are signed with
 * `current` and accepted under any of the three, so a rotation never breaks a cursor in flight:
 *
 * - `next` is announced one rotation before it signs anything: an instance that read the ring
 *   before a rotation already accepts the cursors of instances that read it after.
 * - `previous` keeps the cursors signed before the last rotation valid for one more period.
 *
 * A rotation moves every key one step: `{ previous: current, current: next, next: <fresh> }`. A
 * ring without `next` (a plain-string secret, the format before rings, or a fresh one) first only
 * gains one, so even the first rotation changes no signing key.
 */
export interface CursorKeyRing {
  current: string;
  next?: string;
  previous?: string;
}

/** Keys shorter than this are refused (HMAC-SHA256 wants at least 32 bytes of key). */
export const MIN_KEY_LENGTH = 32;

export const freshCursorKey = (): string => randomBytes(48).toString('base64url');

const validKey = (key: unknown): key is string => typeof key === 'string' && key.length >= MIN_KEY_LENGTH;

/** The secret's text: a JSON ring, or a plain key (the format before rings, and local use). */
export function parseCursorKeyRing(text: string): CursorKeyRing {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) {
    if (!trimmed) throw new Error('The cursor signing key is empty');
    return { current: trimmed };
  }
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(trimmed) as Record<string, unknown>;
  } catch {
    throw new Error('The cursor key ring is not valid JSON');
  }
  const { current, next, previous } = parsed;
  if (!validKey(current))
    throw new Error(`The cursor key ring needs a current key of ${MIN_KEY_LENGTH}+ characters`);
  for (const [name, key] of [
    ['next', next],
    ['previous', previous],
  ] as const) {
    if (key !== undefined && !validKey(key))
      throw new Error(`The cursor key ring's ${name} key is too short`);
  }
  return {
    current,
    ...(typeof next === 'string' && { next }),
    ...(typeof previous === 'string' && { previous }),
  };
}

/** The ring after one rotation (see CursorKeyRing). */
export function rotateCursorKeyRing(
  ring: CursorKeyRing,
  fresh: () => string = freshCursorKey,
): CursorKeyRing {
  if (!ring.next) {
    return { current: ring.current, next: fresh(), ...(ring.previous && { previous: ring.previous }) };
  }
  return { previous: ring.current, current: ring.next, next: fresh() };
}

/** The keys a cursor may be signed with, the signing key first. */
export const verificationKeys = (ring: CursorKeyRing): string[] =>
  [ring.current, ring.next, ring.previous].filter((key): key is string => Boolean(key));
