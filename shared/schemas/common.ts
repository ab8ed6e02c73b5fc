import * as z from './zod';

export const uuid = z.uuid();

/** ISO 8601 instant in UTC with milliseconds, as every timestamp of the API. */
export const isoInstant = z.iso.datetime({ offset: false, precision: 3 });

export const idParams = z.strictObject({ id: uuid });

/** BCP 47 language tag, canonical form (`en-US`, not `en_us`). */
export const localeTag = z.string().check(
  z.refine((value) => {
    try {
      return Intl.getCanonicalLocales(value)[0] === value;
    } catch {
      return false;
    }
  }, 'Expected a canonical BCP 47 language tag, such as "en" or "pt-BR"'),
);

export const successResult = z.object({ success: z.boolean() });

/** Query string numbers arrive as text. */
export const pageLimit = (fallback: number, max: number) =>
  z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(max)), fallback);

export const cursorPage = <T extends z.ZodMiniType>(item: T) =>
  z.object({ data: z.array(item), nextCursor: z.nullable(z.string()) });

/** Offset pagination: `offset` default 0, `limit` default 20, at most 100. */
export const offsetQuery = {
  offset: z._default(z.coerce.number().check(z.int(), z.minimum(0), z.maximum(1_000_000)), 0),
  limit: pageLimit(20, 100),
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
