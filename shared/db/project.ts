import type { $ZodType, output } from 'zod/v4/core';
import { isRecord } from '../schemas/hand-checks';

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

/** Copiers compiled once per schema shape or field list, not per record. */
const copiers = new WeakMap<object, Copier>();

function copierOf(key: object, names: () => readonly string[]): Copier {
  let copy = copiers.get(key);
  if (!copy) {
    copy = compileCopier(names(), []);
    copiers.set(key, copy);
  }
  return copy;
}

/** Copies exactly the fields a response schema declares, so internal attributes never leak by accident. */
export function pickShape<T>(shape: Record<string, unknown>, source: object): T {
  return copierOf(shape, () => Object.keys(shape))(source as Record<string, unknown>) as T;
}

/**
 * `pickShape` for a list of a schema's field names, for modules that must not load the schema (the
 * delivery workers' data layer: shared/schemas/webhook-fields.ts, discord-fields.ts).
 */
export function pickFields<T>(names: readonly string[], source: object): T {
  return copierOf(names, () => names)(source as Record<string, unknown>) as T;
}

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
    const nested = Object.values(def.shape).map((field) => {
      const project = projectorOf(field);
      return project === asIs ? undefined : project;
    });
    const copy = compileCopier(Object.keys(def.shape), nested);
    projector = (value) =>
      typeof value !== 'object' || value === null ? value : copy(value as Record<string, unknown>);
  } else if ((def.type === 'nullable' || def.type === 'optional') && def.innerType) {
    const inner = projectorOf(def.innerType);
    projector =
      inner === asIs ? asIs : (value) => (value === null || value === undefined ? value : inner(value));
  } else if (def.type === 'record') {
    // DynamoDB keeps no order in a map, and a value stored as JSON keeps its writer's: free-form
    // maps (metadata, custom fields) read in key order, the same wherever they come from.
    projector = (value) => {
      if (!isRecord(value)) return value;
      const source = value;
      const keys = Object.keys(source);
      let ordered = true;
      for (let i = 1; i < keys.length && ordered; i++)
        ordered = (keys[i - 1] as string) < (keys[i] as string);
      if (ordered) return source;
      const sorted: Record<string, unknown> = {};
      for (const key of keys.sort()) sorted[key] = source[key];
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
