import { describe, expect, it, vi } from 'vitest';
import { toJSONSchema } from 'zod/v4/core';
import { built, lazily, named, schemaNames } from '../../shared/schemas/names';
import * as z from '../../shared/schemas/zod';

/**
 * Schemas are declared built on first use (shared/schemas/names.ts): importing a schema module
 * builds none of its named or compound schemas, so a function's cold start builds only what its
 * first request parses. What an integrator sees must not change: the same verdicts, the same
 * errors, the same API description.
 */
describe('schemas built on first use', () => {
  it('build nothing when declared, once when first parsed, and never again', () => {
    const build = vi.fn(() => z.strictObject({ id: z.uuid(), limit: z._default(z.int(), 20) }));
    const query = named('LazyQuery', build);
    expect(build).not.toHaveBeenCalled();
    expect(schemaNames.get(query)).toEqual({ id: 'LazyQuery' });

    expect(query.parse({ id: '0190a3c4-7e51-7000-8000-0000000000aa' })).toEqual({
      id: '0190a3c4-7e51-7000-8000-0000000000aa',
      limit: 20,
    });
    expect(query.safeParse({ id: 'x', extra: 1 }).success).toBe(false);
    expect(build).toHaveBeenCalledTimes(1);
  });

  it('give the same verdicts and issues as the schema they build', () => {
    const eager = z.strictObject({ tags: z.array(z.string().check(z.minLength(1))).check(z.maxLength(2)) });
    const lazy = lazily(() => eager);
    for (const input of [
      { tags: ['a'] },
      { tags: [''] },
      { tags: ['a', 'b', 'c'] },
      { tags: 'a' },
      {},
      null,
    ]) {
      const expected = eager.safeParse(input);
      const actual = lazy.safeParse(input);
      expect(actual.success).toBe(expected.success);
      expect(actual.error?.issues).toEqual(expected.error?.issues);
      expect(actual.data).toEqual(expected.data);
    }
  });

  it('keep optional fields optional inside the objects that hold them', () => {
    const holder = z.strictObject({
      note: z.optional(lazily(() => z.string())),
      page: lazily(() => z._default(z.int(), 1)),
    });
    expect(holder.parse({})).toEqual({ page: 1 });
    expect(holder.safeParse({ note: 3 }).success).toBe(false);
  });

  it('describe themselves in the API description as the eager schemas would', () => {
    const options = { reused: 'inline', io: 'output', target: 'draft-2020-12' } as const;
    const item = named('LazyItem', () => z.object({ id: z.string() }), 'An item');
    const page = named('LazyPage', () => z.object({ data: z.array(item), next: z.nullable(z.string()) }));

    const eagerNames = z.registry<{ id: string; description?: string }>();
    const eagerItem = z.object({ id: z.string() });
    eagerNames.add(eagerItem, { id: 'LazyItem', description: 'An item' });
    const eagerPage = z.object({ data: z.array(eagerItem), next: z.nullable(z.string()) });
    eagerNames.add(eagerPage, { id: 'LazyPage' });

    const document = toJSONSchema(page, { ...options, metadata: schemaNames });
    expect(document).toEqual(toJSONSchema(eagerPage, { ...options, metadata: eagerNames }));
    expect(document).toMatchObject({
      $defs: { LazyPage: { properties: { data: { items: { $ref: '#/$defs/LazyItem' } } } } },
    });
    expect(Object.keys(built(item).shape)).toEqual(['id']);
  });
});
