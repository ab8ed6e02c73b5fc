/**
 * What the equivalence tests of the hand-written queue-job checks share (delivery-job.test.ts,
 * discord-job.test.ts): UUIDs on the edges of zod's pattern, and the comparison of field order.
 */

export const NIL = '00000000-0000-0000-0000-000000000000';
export const MAX = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

/** A UUID of the given version and variant characters (third and fourth groups' first). */
export const uuidOf = (version: string, variant: string) =>
  `0190a3c4-7e51-${version}000-${variant}000-0000000000aa`;

/** Field order included, at every depth: a re-queued job is serialized from the value. */
export const keysOf = (value: unknown): unknown =>
  typeof value === 'object' && value !== null
    ? Object.entries(value).map(([key, inner]) => [key, keysOf(inner)])
    : null;

/**
 * How many UUIDs of every version × variant character (hex in either case, and a few that are not)
 * `accepts` takes. zod takes versions 1–8 (8 digits) × variants 8, 9, a, b, A, B: 48.
 */
export function uuidVariantsTaken(accepts: (id: string) => boolean): number {
  const digits = [...'0123456789abcdefABCDEFgG-'];
  let taken = 0;
  for (const version of digits) {
    for (const variant of digits) if (accepts(uuidOf(version, variant))) taken += 1;
  }
  return taken;
}
export const ZOD_UUID_VARIANTS = 8 * 6;
