import type { CustomFieldType } from '../schemas/custom-field';

/** What checking a value needs of a definition: small enough to cache per organization. */
export interface FieldRule {
  type: CustomFieldType;
  /** The option values of a select or multiselect field. */
  options: ReadonlySet<string>;
}

export type FieldRules = ReadonlyMap<string, FieldRule>;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A calendar date `YYYY-MM-DD` that exists (no 2026-02-30). */
export function isCalendarDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0–99 as 1900–1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

const quoted = (values: Iterable<string>): string =>
  [...values]
    .slice(0, 20)
    .map((value) => JSON.stringify(value))
    .join(', ');

/** Why `value` cannot be stored under a field with `rule`, or undefined when it can. `null` always can. */
export function valueProblem(rule: FieldRule, value: unknown): string | undefined {
  if (value === null) return undefined;
  switch (rule.type) {
    case 'text':
      if (typeof value !== 'string') return 'Expected a string (text field)';
      return /[\r\n]/.test(value) ? 'A text field holds one line: use a textarea field for more' : undefined;
    case 'textarea':
      return typeof value === 'string' ? undefined : 'Expected a string (textarea field)';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
        ? undefined
        : 'Expected a number (number field)';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'Expected true or false (boolean field)';
    case 'date':
      return typeof value === 'string' && isCalendarDate(value)
        ? undefined
        : 'Expected a calendar date YYYY-MM-DD (date field)';
    case 'select':
      if (typeof value !== 'string') return 'Expected one option value (select field)';
      return rule.options.has(value)
        ? undefined
        : `Not an option of this field; expected one of ${quoted(rule.options)}`;
    case 'multiselect': {
      if (!Array.isArray(value) || value.some((item) => typeof item !== 'string'))
        return 'Expected an array of option values (multiselect field)';
      const outside = value.find((item) => !rule.options.has(item));
      if (outside !== undefined)
        return `"${outside}" is not an option of this field; expected any of ${quoted(rule.options)}`;
      return new Set(value).size === value.length ? undefined : 'Each option may be chosen once';
    }
  }
}

/**
 * Every problem of `values` against the organization's active definitions, keyed by the dotted
 * path integrators see (`customFields.<name>`): a name with no active definition, a value of the
 * wrong type, a value outside a select's options.
 */
export function valueProblems(
  rules: FieldRules,
  values: Readonly<Record<string, unknown>>,
  path = 'customFields',
): Record<string, string> {
  const problems: Record<string, string> = {};
  for (const [name, value] of Object.entries(values)) {
    const rule = rules.get(name);
    const problem = rule
      ? valueProblem(rule, value)
      : 'No active custom field of this name for conversations (see GET /api/custom-fields)';
    if (problem) problems[`${path}.${name}`] = problem;
  }
  return problems;
}

/** How conversation writes check `customFields`, for the API description. */
export const CUSTOM_FIELD_VALUE_RULES =
  'Values are checked against the organization’s active conversation fields (`GET /api/custom-fields?target=conversation`): a name with no active field, a value of the wrong type (`text` one line, `textarea` any string, `number`, `boolean`, `date` as `YYYY-MM-DD`, `select` one option value, `multiselect` an array of distinct option values) or a value outside a select’s options is 422 naming `customFields.<name>` (`fields` lists every offending name). `null` clears a value of any field. `required` is for forms and is not demanded here.';
