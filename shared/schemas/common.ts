import { documented, lazily } from './names';
import * as z from './zod';

/**
 * Free text carries no control characters but tab, line feed and carriage return: what an
 * integrator stores is later written into CSV and PDF exports, e-mails and chat notifications as is.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
export const PLAIN_TEXT = /^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]*$/;
export const plainText = () =>
  z.regex(PLAIN_TEXT, 'Control characters other than tab and line breaks are not allowed');

/** Keys of free-form maps (metadata, custom fields). */
export const mapKey = lazily(() => z.string().check(z.minLength(1), z.maxLength(100), plainText()));

/** A map of at most `maxKeys` entries, the bound stated in the document as `maxProperties`. */
export const boundedRecord = <V extends z.ZodMiniType>(value: V, maxKeys: number) =>
  documented(
    z
      .record(mapKey, value)
      .check(z.refine((map) => Object.keys(map).length <= maxKeys, `At most ${maxKeys} keys are allowed`)),
    { maxProperties: maxKeys },
  );

/**
 * An opaque cursor as the API hands them out. Anything else is 400 (the contract's malformed
 * cursor), so the pattern is declared in the document and enforced by the cursor check itself.
 */
export const cursorParam = documented(
  lazily(() => z.string().check(z.minLength(1), z.maxLength(2048))),
  { pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$' },
);

export const uuid = z.uuid();

/** ISO 8601 instant in UTC with milliseconds, as every timestamp of the API. */
export const isoInstant = z.iso.datetime({ offset: false, precision: 3 });

export const idParams = lazily(() => z.strictObject({ id: uuid }));

/** BCP 47 language tag, canonical form (`en-US`, not `en_us`). */
export const localeTag = lazily(() =>
  z.string().check(
    // Implied by the canonical form below; stated for clients and the API description.
    z.maxLength(64),
    z.regex(/^[A-Za-z0-9-]+$/),
    z.refine((value) => {
      try {
        return Intl.getCanonicalLocales(value)[0] === value;
      } catch {
        return false;
      }
    }, 'Expected a canonical BCP 47 language tag, such as "en" or "pt-BR"'),
  ),
);

export const successResult = lazily(() => z.object({ success: z.boolean() }));

/** Query string numbers arrive as text. */
export const pageLimit = (fallback: number, max: number) =>
  z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(max)), fallback);

export const cursorPage = <T extends z.ZodMiniType>(item: T) =>
  z.object({ data: z.array(item), nextCursor: z.nullable(z.string()) });

/** Offset pagination: `offset` default 0, `limit` default 20, at most 100. */
export const offsetQuery = {
  offset: lazily(() => z._default(z.coerce.number().check(z.int(), z.minimum(0), z.maximum(1_000_000)), 0)),
  limit: lazily(() => pageLimit(20, 100)),
};

export const offsetPage = <T extends z.ZodMiniType>(item: T) =>
  z.object({
    data: z.array(item),
    pagination: z.object({
      totalItems: z.int(),
      page: z.int(),
      pageSize: z.int(),
      hasNextPage: z.boolean(),
      hasPrevPage: z.boolean(),
    }),
  });

/** The contract's pagination object for an offset page. */
export function paginationOf(offset: number, limit: number, totalItems: number) {
  return {
    totalItems,
    page: Math.floor(offset / limit) + 1,
    pageSize: limit,
    hasNextPage: offset + limit < totalItems,
    hasPrevPage: offset > 0,
  };
}

/** The page of `all` that `offset`/`limit` select. */
export function pageOf<T>(all: readonly T[], offset: number, limit: number) {
  return { data: all.slice(offset, offset + limit), pagination: paginationOf(offset, limit, all.length) };
}
