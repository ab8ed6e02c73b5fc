/**
 * The one builder of an UpdateItem's expression (a single UpdateCommand or a transaction's Update):
 * records in, `UpdateExpression` with its `ExpressionAttributeNames` and `ExpressionAttributeValues`
 * out, ready to spread into the command's input.
 *
 * - `set`: attribute → value, `SET #s0 = :s0, …`; an undefined value is left out (nested maps and
 *   lists are values like any other: the DocumentClient marshals them).
 * - `remove`: attributes, `REMOVE #r0, …`.
 * - `add`: attribute → amount (or set), `ADD #a0 :a0, …`.
 *
 * Every attribute name goes behind a `#` placeholder (reserved words such as `name` or `status` need
 * no care) and every value behind a `:` one. The names are top-level attributes, never document
 * paths: `a.b` is the attribute called `a.b`. A clause with nothing in it is left out; an update with
 * nothing at all to write, or naming one attribute in two clauses, is a programming error and throws
 * (DynamoDB would refuse it anyway).
 *
 * A condition brings its own placeholders (`:rev`, `#hash`) in `condition`; they are merged with the
 * builder's, and one that collides with them throws rather than silently binding another value. A
 * condition that compares an attribute the update writes names it through the builder's
 * placeholders (`condition.expression` as a function of them).
 */

export interface UpdateChanges {
  /** Attribute → value to set; undefined values are left out. */
  readonly set?: Readonly<Record<string, unknown>>;
  /** Attributes to remove. */
  readonly remove?: readonly string[];
  /** Attribute → amount (a number, or a set to add elements of) to add. */
  readonly add?: Readonly<Record<string, unknown>>;
}

/** The placeholders the update gave the attributes it writes; an attribute it does not write throws. */
export interface Placeholders {
  /** The name placeholder: `#s0` for the first attribute set, `#r0` for the first removed. */
  name(attribute: string): string;
  /** The value placeholder: `:s0` for the first attribute set (a removed attribute has none). */
  value(attribute: string): string;
}

export interface Condition {
  /** The `ConditionExpression`, or a function of the update's placeholders that returns it. */
  readonly expression: string | ((placeholders: Placeholders) => string);
  /** The condition's own name placeholders (`#hash` → `hash`). */
  readonly names?: Readonly<Record<string, string>>;
  /** The condition's own value placeholders (`:rev` → 3). */
  readonly values?: Readonly<Record<string, unknown>>;
}

/** What an UpdateItem's input takes from the builder; the maps are absent when empty (DynamoDB refuses empty ones). */
export interface UpdateExpressionInput {
  UpdateExpression: string;
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

/** `changes` (and `condition`) as an UpdateItem's expression, every name and value behind a placeholder. */
export function updateExpression(changes: UpdateChanges, condition?: Condition): UpdateExpressionInput {
  const set = Object.entries(changes.set ?? {}).filter(([, value]) => value !== undefined);
  const remove = changes.remove ?? [];
  const add = Object.entries(changes.add ?? {});
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const refs = new Map<string, { name: string; value?: string }>();
  const placeholder = (attribute: string, name: string, value?: string) => {
    if (refs.has(attribute)) throw new Error(`An update names the attribute "${attribute}" twice`);
    refs.set(attribute, value === undefined ? { name } : { name, value });
    names[name] = attribute;
  };

  const clauses: string[] = [];
  if (set.length > 0) {
    const assignments = set.map(([attribute, value], i) => {
      placeholder(attribute, `#s${i}`, `:s${i}`);
      values[`:s${i}`] = value;
      return `#s${i} = :s${i}`;
    });
    clauses.push(`SET ${assignments.join(', ')}`);
  }
  if (remove.length > 0) {
    const removed = remove.map((attribute, i) => {
      placeholder(attribute, `#r${i}`);
      return `#r${i}`;
    });
    clauses.push(`REMOVE ${removed.join(', ')}`);
  }
  if (add.length > 0) {
    const additions = add.map(([attribute, amount], i) => {
      placeholder(attribute, `#a${i}`, `:a${i}`);
      values[`:a${i}`] = amount;
      return `#a${i} :a${i}`;
    });
    clauses.push(`ADD ${additions.join(', ')}`);
  }
  if (clauses.length === 0) throw new Error('An update with nothing to set, remove or add');

  const input: UpdateExpressionInput = { UpdateExpression: clauses.join(' ') };
  if (condition) {
    const { expression } = condition;
    input.ConditionExpression =
      typeof expression === 'string' ? expression : expression(placeholdersOf(refs));
    mergeDistinct(names, condition.names);
    mergeDistinct(values, condition.values);
  }
  if (Object.keys(names).length > 0) input.ExpressionAttributeNames = names;
  if (Object.keys(values).length > 0) input.ExpressionAttributeValues = values;
  return input;
}

function placeholdersOf(refs: ReadonlyMap<string, { name: string; value?: string }>): Placeholders {
  const refOf = (attribute: string) => {
    const ref = refs.get(attribute);
    if (!ref) throw new Error(`The update does not write the attribute "${attribute}"`);
    return ref;
  };
  return {
    name: (attribute) => refOf(attribute).name,
    value: (attribute) => {
      const { value } = refOf(attribute);
      if (value === undefined) throw new Error(`The update removes "${attribute}": it has no value`);
      return value;
    },
  };
}

/** The condition's placeholders beside the builder's: one already taken is a programming error. */
function mergeDistinct<V>(into: Record<string, V>, from: Readonly<Record<string, V>> | undefined) {
  for (const [placeholder, bound] of Object.entries(from ?? {})) {
    if (Object.hasOwn(into, placeholder))
      throw new Error(`The condition's placeholder ${placeholder} is the update's own`);
    into[placeholder] = bound;
  }
}
