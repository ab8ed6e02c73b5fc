/**
 * zod's `z.uuid()` pattern (zod/v4/core/regexes.js), for the checks written by hand to keep zod out
 * of a worker's bundle: RFC 9562 layout, version 1–8, variant 10xx, either case; and the nil and max
 * UUIDs, written in lower case. test/unit/discord-job.test.ts checks it is still zod's.
 */
export const UUID_PATTERN =
  /^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$/;
