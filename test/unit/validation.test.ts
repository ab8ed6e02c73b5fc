import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../shared/errors';
import { exposes, statusOfCode } from '../../shared/http/errors';
import { parseOrThrow } from '../../shared/http/validation';
import * as z from '../../shared/schemas/zod';

const schema = z.strictObject({
  name: z.string().check(z.minLength(1)),
  a: z.optional(
    z.strictObject({
      b: z.array(z.number()),
    }),
  ),
  limit: z.optional(z.int().check(z.maximum(100))),
});

function validationErrorOf(value: unknown, root = 'body'): ValidationError {
  try {
    parseOrThrow(schema, value, root);
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error('expected a ValidationError');
}

describe('parseOrThrow', () => {
  it('returns the parsed value when it is valid', () => {
    // Act
    const parsed = parseOrThrow(schema, { name: 'x', a: { b: [1, 2] } }, 'body');

    // Assess
    expect(parsed).toEqual({ name: 'x', a: { b: [1, 2] } });
  });

  it('answers 422 VALIDATION_ERROR', () => {
    // Act
    const error = validationErrorOf({ name: '' });

    // Assess
    expect(statusOfCode[error.code]).toBe(422);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(exposes(error)).toBe(true);
    expect(error.details).toEqual({ field: 'name' });
    expect(error.message).toContain('name');
  });

  it('names an unknown key first even when it follows other mistakes', () => {
    // Act
    const error = validationErrorOf({ limit: 101, name: '', isAdmin: true });

    // Assess
    expect(error.details?.field).toBe('isAdmin');
    expect(Object.keys(error.fields ?? {})[0]).toBe('isAdmin');
    expect(error.fields?.isAdmin).toBe('Unknown field "isAdmin"');
  });

  it('dots nested paths, including array indexes', () => {
    // Act
    const error = validationErrorOf({ name: 'x', a: { b: [1, 'two'] } });

    // Assess
    expect(error.details?.field).toBe('a.b.1');
    expect(Object.keys(error.fields ?? {})).toEqual(['a.b.1']);
  });

  it('dots the path of an unknown key inside a nested object', () => {
    // Act
    const error = validationErrorOf({ name: 'x', a: { b: [], role: 'admin' } });

    // Assess
    expect(error.details?.field).toBe('a.role');
  });

  it('lists every offending field in `fields`', () => {
    // Act
    const error = validationErrorOf({ name: '', a: { b: ['x', 2, 'y'] }, limit: 500, extra: 1, other: 2 });

    // Assess
    expect(Object.keys(error.fields ?? {}).sort()).toEqual([
      'a.b.0',
      'a.b.2',
      'extra',
      'limit',
      'name',
      'other',
    ]);
    expect(['extra', 'other']).toContain(error.details?.field);
    for (const message of Object.values(error.fields ?? {})) expect(message).not.toBe('');
  });

  it('names the root when the value itself is wrong', () => {
    // Act
    const error = validationErrorOf('not an object', 'query');

    // Assess
    expect(error.details?.field).toBe('query');
    expect(error.fields).toHaveProperty('query');
  });
});
