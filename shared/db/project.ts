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
