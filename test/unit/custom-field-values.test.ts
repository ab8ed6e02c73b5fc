import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type FieldRule,
  isCalendarDate,
  valueProblem,
  valueProblems,
} from '../../shared/custom-fields/values';

const rule = (type: FieldRule['type'], options: string[] = []): FieldRule => ({
  type,
  options: new Set(options),
});

describe('custom-field values', () => {
  it('accepts values of the field type and null for every type', () => {
    const accepted: [FieldRule, unknown][] = [
      [rule('text'), 'A-1042'],
      [rule('textarea'), 'line one\nline two'],
      [rule('number'), 3.5],
      [rule('boolean'), false],
      [rule('date'), '2026-02-28'],
      [rule('select', ['late', 'damaged']), 'late'],
      [rule('multiselect', ['late', 'damaged']), ['damaged', 'late']],
      [rule('multiselect', ['late']), []],
    ];
    for (const [fieldRule, value] of accepted)
      expect(valueProblem(fieldRule, value), String(value)).toBeUndefined();
    for (const type of ['text', 'textarea', 'number', 'boolean', 'date', 'select', 'multiselect'] as const)
      expect(valueProblem(rule(type), null)).toBeUndefined();
  });

  it('refuses wrong types, values outside the options, repeated choices and dates that do not exist', () => {
    const refused: [FieldRule, unknown][] = [
      [rule('text'), 42],
      [rule('text'), 'two\nlines'],
      [rule('textarea'), true],
      [rule('number'), '42'],
      [rule('boolean'), 'true'],
      [rule('date'), '2026-02-30'],
      [rule('date'), '2026-11-21T10:00:00.000Z'],
      [rule('select', ['late']), 'lost'],
      [rule('select', ['late']), ['late']],
      [rule('multiselect', ['late']), 'late'],
      [rule('multiselect', ['late']), ['late', 'lost']],
      [rule('multiselect', ['late']), ['late', 'late']],
    ];
    for (const [fieldRule, value] of refused)
      expect(valueProblem(fieldRule, value), JSON.stringify(value)).toBeDefined();
  });

  it('names every offending value customFields.<name>, unknown names included', () => {
    const rules = new Map([
      ['issueType', rule('select', ['late'])],
      ['orderNumber', rule('text')],
    ]);
    const problems = valueProblems(rules, { issueType: 'lost', orderNumber: 'A-1', colour: 'red' });
    expect(Object.keys(problems)).toEqual(['customFields.issueType', 'customFields.colour']);
  });

  it('knows calendar dates (property: every real date, formatted, is one)', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('0001-01-01T00:00:00Z'),
          max: new Date('9999-12-31T00:00:00Z'),
          noInvalidDate: true,
        }),
        (date) => {
          expect(isCalendarDate(date.toISOString().slice(0, 10))).toBe(true);
        },
      ),
    );
    expect(isCalendarDate('2024-02-29')).toBe(true);
    expect(isCalendarDate('2025-02-29')).toBe(false);
    expect(isCalendarDate('2025-13-01')).toBe(false);
  });
});
