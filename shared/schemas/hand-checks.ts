/**
 * zod's rules for what the code outside schemas checks by hand, without zod: the queue jobs'
 * validators (shared/webhooks/delivery-job.ts, shared/discord/delivery-job.ts), which keep zod out
 * of the delivery workers' bundles, and the readers of stored JSON.
 */

/**
 * zod's `z.uuid()` pattern (zod/v4/core/regexes.js): RFC 9562 layout, version 1–8, variant 10xx,
 * either case; and the nil and max UUIDs, written in lower case. test/unit/discord-job.test.ts
 * checks it is still zod's.
 */
export const UUID_PATTERN =
  /^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$/;

export const isUuid = (value: unknown): value is string =>
  typeof value === 'string' && UUID_PATTERN.test(value);

/** An object as zod's object schemas take one: not null, not an array. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
