import type { $ZodType } from 'zod/v4/core';
import * as z from './zod';

export interface SchemaName {
  /** The name under `components.schemas` of the OpenAPI document, and of generated client types. */
  id?: string;
  description?: string;
  /** JSON Schema keywords the document states for a rule enforced outside the schema. */
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  maxProperties?: number;
}

/** The schemas that have a name in the API description; everything else is inlined where used. */
export const schemaNames = z.registry<SchemaName>();

/**
 * States in the API description a constraint that a check outside the schema enforces with another
 * status (a malformed cursor is 400, a bulk id that is not a UUID is reported missing): the schema
 * stays as lenient as the contract needs, the document tells clients what will work.
 */
export function documented<T extends $ZodType>(schema: T, keywords: Omit<SchemaName, 'id'>): T {
  schemaNames.add(schema, keywords);
  return schema;
}

/**
 * A schema built on first use (a parse, the API description), not at import: a function's cold
 * start builds the few schemas of the requests it answers, not the hundreds its modules declare
 * (the conversations function built 556 at import, of which any one request parses a handful; now
 * 120, the scalar leaves every module shares). zod's `lazy` delegates parsing, and the API
 * description of a lazy schema is that of the schema it builds (test/unit/lazy-schemas.test.ts).
 */
export const lazily = <T extends $ZodType>(build: () => T): z.ZodMiniLazy<T> => z.lazy(build);

/** The schema a lazy one builds (now, if not yet): to compose a shape from another's, inside a builder. */
export const built = <T extends $ZodType>(schema: z.ZodMiniLazy<T>): T => schema._zod.innerType;

/** Gives a schema its public name, once, where it is declared; built on first use (`lazily`). */
export function named<T extends $ZodType>(
  id: string,
  build: () => T,
  description?: string,
): z.ZodMiniLazy<T> {
  const schema = lazily(build);
  schemaNames.add(schema, description ? { id, description } : { id });
  return schema;
}
