import { ValidationError } from '../errors';
import { boundedRecord } from './common';
import * as z from './zod';

/**
 * Bounds of every free-form JSON value the API stores (conversation, visitor and message
 * `metadata`, custom-field values). Stored values are later copied into other items (the visitor
 * into each of its conversations, a conversation into its events), and DynamoDB refuses an item
 * nested deeper than 32 levels or larger than 400 KB: bounding the value where it enters keeps
 * every later write that embeds it valid.
 */
export const FREE_JSON_MAX_DEPTH = 8;
export const FREE_JSON_MAX_BYTES = 16 * 1024;

/** Levels of objects and arrays: a scalar is 0, `{ "a": 1 }` is 1. Iterative: input depth is not trusted. */
export function nestingDepth(value: unknown): number {
  let deepest = 0;
  const pending: Array<[unknown, number]> = [[value, 0]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [current, depth] = next;
    if (typeof current !== 'object' || current === null) continue;
    deepest = Math.max(deepest, depth + 1);
    for (const child of Object.values(current)) pending.push([child, depth + 1]);
  }
  return deepest;
}

/** Why `value` may not be stored, or undefined when it may. */
export function freeJsonProblem(value: unknown): string | undefined {
  const depth = nestingDepth(value);
  if (depth > FREE_JSON_MAX_DEPTH)
    return `Nested ${depth} levels deep; at most ${FREE_JSON_MAX_DEPTH} levels are allowed`;
  const bytes = Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
  if (bytes > FREE_JSON_MAX_BYTES)
    return `${bytes} bytes as JSON; at most ${FREE_JSON_MAX_BYTES} bytes (16 KiB) are allowed`;
  return undefined;
}

/** A zod check that refuses a value beyond the bounds, naming the field it is attached to. */
export const withinFreeJsonBounds = <T>() =>
  z.superRefine<T>((value, context) => {
    const problem = freeJsonProblem(value);
    if (problem) context.addIssue({ code: 'custom', message: problem, input: value });
  });

/** For values assembled after validation (a PATCH merge): 422 naming `field` when out of bounds. */
export function assertFreeJson(field: string, value: unknown): void {
  const problem = freeJsonProblem(value);
  if (problem) throw ValidationError.field(field, problem);
}

/** Free-form metadata as integrators send it: string keys, any JSON values, within the bounds. */
export const metadataObject = boundedRecord(z.unknown(), 200).check(
  withinFreeJsonBounds<Record<string, unknown>>(),
);
