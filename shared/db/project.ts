import type { $ZodLazy, $ZodType } from 'zod/v4/core';
import { isRecord } from '../schemas/hand-checks';
import type { Projection, ProjectionOf, RecordProjection } from '../schemas/projections';

type Projector = (value: unknown) => unknown;

/**
 * The projection a resource schema describes: its declared fields only, in its order, nested
 * objects included; free-form maps (`z.record`) with their keys sorted; anything else as is. The
 * tests hold every declared projection (shared/schemas/projections.ts) equal to it.
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

/**
 * A copier of exactly the declared fields, in their order: a plain loop over the names, so an
 * attribute the projection does not name (keys, index keys, claims, the service's own state) never
 * reaches an answer. A field the source lacks is copied as undefined, which JSON leaves out.
 */
function recordProjector(fields: RecordProjection): Projector {
  const names = Object.keys(fields);
  const nested = names.map((name) => {
    const field = fields[name] as Projection;
    return field === 'value' ? undefined : projector(field);
  });
  return (value) => {
    if (typeof value !== 'object' || value === null) return value;
    const source = value as Record<string, unknown>;
    const copy: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      const project = nested[i];
      copy[name] = project ? project(source[name]) : source[name];
    }
    return copy;
  };
}

const built = new WeakMap<object, Projector>();

/** Copies a value as a projection describes it; built once per projection. */
export function projector(projection: Projection): Projector {
  if (projection === 'value') return asIs;
  if (projection === 'map') return sortedMap;
  const known = built.get(projection);
  if (known) return known;
  let project: Projector;
  if (Array.isArray(projection)) {
    const element = projector((projection as readonly [Projection])[0]);
    project = (value) => (Array.isArray(value) ? value.map(element) : value);
  } else {
    project = recordProjector(projection as RecordProjection);
  }
  built.set(projection, project);
  return project;
}

/**
 * The one way a stored item becomes its resource: `project<Note>(noteProjection)(item)` copies
 * exactly the fields the resource's projection declares, in its order, and nothing else.
 */
export function project<T>(projection: ProjectionOf<T>): (item: object) => T {
  const copy = projector(projection as Projection);
  return (item) => copy(item) as T;
}

/**
 * The data layer's own view of a stored item: the resource's fields and the service's own (`also`),
 * each copied as stored (no nested projection: the state is written back as it was read). Still an
 * allow-list: keys, index keys and claims stay behind.
 */
export function projectState<T>(projection: RecordProjection, also: readonly string[]): (item: object) => T {
  const names = [...Object.keys(projection), ...also];
  const copy = projector(Object.fromEntries(names.map((name) => [name, 'value'])));
  return (item) => copy(item) as T;
}
