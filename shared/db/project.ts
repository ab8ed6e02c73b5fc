import type { $ZodType, output } from 'zod/v4/core';

/**
 * Copies exactly the fields a response schema declares, so internal attributes never leak by
 * accident. The field list is computed once per schema shape, not per record.
 */
const fieldLists = new WeakMap<object, readonly string[]>();

export function pickShape<T>(shape: Record<string, unknown>, source: object): T {
  const record = source as Record<string, unknown>;
  let fields = fieldLists.get(shape);
  if (!fields) {
    fields = Object.keys(shape);
    fieldLists.set(shape, fields);
  }
  const picked: Record<string, unknown> = {};
  for (const field of fields) {
    if (field in record) picked[field] = record[field];
  }
  return picked as T;
}

type Projector = (value: unknown) => unknown;
const projectors = new WeakMap<$ZodType, Projector>();
const asIs: Projector = (value) => value;

/**
 * Copies a value as a response schema describes it, nested objects included: the declared fields
 * only, in the schema's order. DynamoDB keeps no order in a map, so a record read back lists its
 * fields as storage happens to; answers and event payloads that go through the same projector of
 * the same schema read as the same document. Compiled once per schema.
 */
export function projectorOf(schema: $ZodType): Projector {
  const known = projectors.get(schema);
  if (known) return known;
  const def = schema._zod.def as unknown as {
    type: string;
    shape?: Record<string, $ZodType>;
    innerType?: $ZodType;
    element?: $ZodType;
  };
  let projector = asIs;
  if (def.type === 'object' && def.shape) {
    const fields = Object.entries(def.shape).map(([name, field]) => [name, projectorOf(field)] as const);
    projector = (value) => {
      if (typeof value !== 'object' || value === null) return value;
      const source = value as Record<string, unknown>;
      const picked: Record<string, unknown> = {};
      for (const [name, project] of fields) if (name in source) picked[name] = project(source[name]);
      return picked;
    };
  } else if ((def.type === 'nullable' || def.type === 'optional') && def.innerType) {
    const inner = projectorOf(def.innerType);
    projector =
      inner === asIs ? asIs : (value) => (value === null || value === undefined ? value : inner(value));
  } else if (def.type === 'record') {
    // DynamoDB keeps no order in a map, and a value stored as JSON keeps its writer's: free-form
    // maps (metadata, custom fields) read in key order, the same wherever they come from.
    projector = (value) => {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
      const source = value as Record<string, unknown>;
      const sorted: Record<string, unknown> = {};
      for (const key of Object.keys(source).sort()) sorted[key] = source[key];
      return sorted;
    };
  } else if (def.type === 'array' && def.element) {
    const element = projectorOf(def.element);
    projector = element === asIs ? asIs : (value) => (Array.isArray(value) ? value.map(element) : value);
  }
  projectors.set(schema, projector);
  return projector;
}

/** A typed projector: `project(schema)(item)` is the resource as the schema declares it. */
export const project =
  <S extends $ZodType>(schema: S) =>
  (item: object): output<S> =>
    projectorOf(schema)(item) as output<S>;
