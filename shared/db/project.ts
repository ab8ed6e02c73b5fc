import type { $ZodLazy, $ZodType, output } from 'zod/v4/core';
import { isRecord } from '../schemas/hand-checks';
import type { Projection, ProjectionOf, RecordProjection } from '../schemas/projections';

type Projector = (value: unknown) => unknown;
type Copier = (source: Record<string, unknown>) => Record<string, unknown>;

/**
 * A copier of exactly `names`, as one object literal: V8 builds an object of a fixed shape from one
 * boilerplate, some 40 times faster than adding ~30 keys in a loop (2.2 µs per conversation, most of
 * the warm GET's own time). The source text holds only the schema's field names, quoted as JSON, and
 * is built once per schema at cold start; no request data ever reaches it. A field the source lacks
 * is copied as undefined, which JSON leaves out and the table writer drops.
 */
function compileCopier(names: readonly string[], nested: readonly (Projector | undefined)[]): Copier {
  const fields = names.map((name, i) => {
    const key = JSON.stringify(name);
    return nested[i] ? `${key}: p[${i}](s[${key}])` : `${key}: s[${key}]`;
  });
  const build = new Function('p', `return function copy(s) { return { ${fields.join(', ')} }; };`);
  return build(nested) as Copier;
}

/** Copiers compiled once per shape, not per record. */
const copiers = new WeakMap<object, Copier>();

/** Copies exactly the fields a shape declares (its keys), so internal attributes never leak by accident. */
export function pickShape<T>(shape: Record<string, unknown>, source: object): T {
  let copy = copiers.get(shape);
  if (!copy) {
    copy = compileCopier(Object.keys(shape), []);
    copiers.set(shape, copy);
  }
  return copy(source as Record<string, unknown>) as T;
}

/**
 * The projection a response schema describes: its declared fields only, in its order, nested
 * objects included; free-form maps (`z.record`) with their keys sorted; anything else as is.
 */
export function projectionOf(schema: $ZodType): Projection {
  const def = schema._zod.def as unknown as {
    type: string;
    shape?: Record<string, $ZodType>;
    innerType?: $ZodType;
    element?: $ZodType;
  };
  if (def.type === 'object' && def.shape) {
    const fields: Record<string, Projection> = {};
    for (const [name, field] of Object.entries(def.shape)) fields[name] = projectionOf(field);
    return fields;
  }
  if (def.type === 'lazy') return projectionOf((schema as $ZodLazy)._zod.innerType);
  if ((def.type === 'nullable' || def.type === 'optional') && def.innerType)
    return projectionOf(def.innerType);
  if (def.type === 'record') return 'map';
  if (def.type === 'array' && def.element) {
    const element = projectionOf(def.element);
    return element === 'value' ? 'value' : [element];
  }
  return 'value';
}

const asIs: Projector = (value) => value;

/**
 * DynamoDB keeps no order in a map, and a value stored as JSON keeps its writer's: free-form maps
 * (metadata, custom fields) read in key order, the same wherever they come from.
 */
const sortedMap: Projector = (value) => {
  if (!isRecord(value)) return value;
  const source = value;
  const keys = Object.keys(source);
  let ordered = true;
  for (let i = 1; i < keys.length && ordered; i++) ordered = (keys[i - 1] as string) < (keys[i] as string);
  if (ordered) return source;
  const sorted: Record<string, unknown> = {};
  for (const key of keys.sort()) sorted[key] = source[key];
  return sorted;
};

const compiled = new WeakMap<object, Projector>();

/**
 * Copies a value as a projection describes it. DynamoDB keeps no order in a map, so a record read
 * back lists its fields as storage happens to; answers and event payloads that go through the same
 * projection read as the same document. Compiled once per projection.
 */
export function projector(projection: Projection): Projector {
  if (projection === 'value') return asIs;
  if (projection === 'map') return sortedMap;
  const known = compiled.get(projection);
  if (known) return known;
  let project: Projector;
  if (Array.isArray(projection)) {
    const element = projector((projection as readonly [Projection])[0]);
    project = (value) => (Array.isArray(value) ? value.map(element) : value);
  } else {
    const fields = projection as RecordProjection;
    const nested = Object.values(fields).map((field) => (field === 'value' ? undefined : projector(field)));
    const copy = compileCopier(Object.keys(fields), nested);
    project = (value) =>
      typeof value !== 'object' || value === null ? value : copy(value as Record<string, unknown>);
  }
  compiled.set(projection, project);
  return project;
}

const schemaProjectors = new WeakMap<$ZodType, Projector>();

/** `projector` of a response schema's projection, for modules that load the schema anyway. */
export function projectorOf(schema: $ZodType): Projector {
  let project = schemaProjectors.get(schema);
  if (!project) {
    project = projector(projectionOf(schema));
    schemaProjectors.set(schema, project);
  }
  return project;
}

/** A typed projector of a resource's zod-free projection: `projectAs<Note>(noteProjection)(item)`. */
export const projectAs =
  <T>(projection: ProjectionOf<T>) =>
  (item: object): T =>
    projector(projection as Projection)(item) as T;

/** A typed projector: `project(schema)(item)` is the resource as the schema declares it. */
export const project =
  <S extends $ZodType>(schema: S) =>
  (item: object): output<S> =>
    projectorOf(schema)(item) as output<S>;
