import type { $ZodType } from 'zod/v4/core';
import * as z from './zod';

export interface SchemaName {
  /** The name under `components.schemas` of the OpenAPI document, and of generated client types. */
  id?: string;
  description?: string;
  /** JSON Schema keywords the document states for a rule enforced outside the schema. */
  pattern?: string;
  format?: string;
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

/** Gives a schema its public name, once, where it is declared. */
export function named<T extends $ZodType>(id: string, schema: T, description?: string): T {
  schemaNames.add(schema, description ? { id, description } : { id });
  return schema;
}
