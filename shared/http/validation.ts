import type { $ZodIssue, $ZodType } from 'zod/v4/core';
import { safeParse } from 'zod/v4/core';
import { ValidationError } from '../errors';

function dotted(path: readonly PropertyKey[]): string {
  return path.map(String).join('.');
}

/**
 * Zod issues → the contract's 422: `fields` maps every offending dotted path to its message and
 * `details.field` names the first one. Unknown keys come first, since mass assignment is the
 * mistake an integrator most needs to see.
 */
export function issuesToValidationError(issues: readonly $ZodIssue[], root: string): ValidationError {
  const fields: Record<string, string> = {};
  const ordered = [...issues].sort(
    (a, b) => Number(b.code === 'unrecognized_keys') - Number(a.code === 'unrecognized_keys'),
  );
  for (const issue of ordered) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) fields[dotted([...issue.path, key])] ??= `Unknown field "${key}"`;
      continue;
    }
    const path = dotted(issue.path) || root;
    fields[path] ??= issue.message;
  }
  const first = Object.keys(fields)[0] ?? root;
  return new ValidationError(`Invalid ${root}: ${first} — ${fields[first] ?? 'invalid value'}`, fields);
}

export function parseOrThrow<T extends $ZodType>(schema: T, value: unknown, root: string) {
  const result = safeParse(schema, value);
  if (!result.success) throw issuesToValidationError(result.error.issues, root);
  return result.data;
}
