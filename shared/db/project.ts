/** Copies exactly the fields a response schema declares: internal attributes never leak by accident. */
export function pickShape<T>(shape: Record<string, unknown>, record: Record<string, unknown>): T {
  const picked: Record<string, unknown> = {};
  for (const field of Object.keys(shape)) {
    if (field in record) picked[field] = record[field];
  }
  return picked as T;
}
