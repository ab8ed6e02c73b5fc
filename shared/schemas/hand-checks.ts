/** What the readers of stored JSON check by hand, without zod. */

/** An object as zod's object schemas take one: not null, not an array. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
