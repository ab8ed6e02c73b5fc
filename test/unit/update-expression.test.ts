import { describe, expect, it } from 'vitest';
import { updateExpression } from '../../shared/db/update-expression';

describe('updateExpression', () => {
  it('puts every name and value behind a placeholder, reserved words included', () => {
    const update = updateExpression({ set: { name: 'Support', status: 'open', size: 3 } });
    expect(update).toEqual({
      UpdateExpression: 'SET #s0 = :s0, #s1 = :s1, #s2 = :s2',
      ExpressionAttributeNames: { '#s0': 'name', '#s1': 'status', '#s2': 'size' },
      ExpressionAttributeValues: { ':s0': 'Support', ':s1': 'open', ':s2': 3 },
    });
    expect(update.UpdateExpression).not.toMatch(/name|status|size/);
  });

  it('sets nested values whole, and treats a dotted name as one top-level attribute', () => {
    const chatbot = { enabled: true, rules: [{ match: 'hi', reply: { text: 'Hello' } }], greeting: null };
    const update = updateExpression({ set: { chatbot, 'a.b': 1 } });
    expect(update.UpdateExpression).toBe('SET #s0 = :s0, #s1 = :s1');
    expect(update.ExpressionAttributeNames).toEqual({ '#s0': 'chatbot', '#s1': 'a.b' });
    expect(update.ExpressionAttributeValues?.[':s0']).toBe(chatbot);
  });

  it('leaves undefined values out, and writes null', () => {
    expect(updateExpression({ set: { a: undefined, b: null } })).toEqual({
      UpdateExpression: 'SET #s0 = :s0',
      ExpressionAttributeNames: { '#s0': 'b' },
      ExpressionAttributeValues: { ':s0': null },
    });
  });

  it('removes attributes, with no SET clause when nothing is set', () => {
    expect(updateExpression({ set: {}, remove: ['description', 'gsi2pk'] })).toEqual({
      UpdateExpression: 'REMOVE #r0, #r1',
      ExpressionAttributeNames: { '#r0': 'description', '#r1': 'gsi2pk' },
    });
    expect(updateExpression({ set: { a: undefined }, remove: ['b'] }).UpdateExpression).toBe('REMOVE #r0');
  });

  it('sets, removes and adds in one expression, in that order', () => {
    expect(updateExpression({ set: { entity: 'stats' }, remove: ['old'], add: { count: 2 } })).toEqual({
      UpdateExpression: 'SET #s0 = :s0 REMOVE #r0 ADD #a0 :a0',
      ExpressionAttributeNames: { '#s0': 'entity', '#r0': 'old', '#a0': 'count' },
      ExpressionAttributeValues: { ':s0': 'stats', ':a0': 2 },
    });
  });

  it('refuses an update with nothing to write, and one attribute in two clauses', () => {
    expect(() => updateExpression({})).toThrow(/nothing/);
    expect(() => updateExpression({ set: { a: undefined }, remove: [] })).toThrow(/nothing/);
    expect(() => updateExpression({ set: { a: 1 }, remove: ['a'] })).toThrow(/"a" twice/);
    expect(() => updateExpression({ set: { a: 1 }, add: { a: 1 } })).toThrow(/"a" twice/);
  });

  it('merges a condition’s own placeholders beside its own', () => {
    const update = updateExpression(
      { set: { revokedAt: '2026-11-24T10:00:00.000Z' } },
      {
        expression: '#hash = :hash AND revokedAt = :null',
        names: { '#hash': 'hash' },
        values: { ':hash': 'h', ':null': null },
      },
    );
    expect(update).toEqual({
      UpdateExpression: 'SET #s0 = :s0',
      ConditionExpression: '#hash = :hash AND revokedAt = :null',
      ExpressionAttributeNames: { '#s0': 'revokedAt', '#hash': 'hash' },
      ExpressionAttributeValues: { ':s0': '2026-11-24T10:00:00.000Z', ':hash': 'h', ':null': null },
    });
  });

  it('refuses a condition placeholder that is one of the update’s, rather than rebinding it', () => {
    expect(() =>
      updateExpression({ set: { rev: 2 } }, { expression: 'rev = :s0', values: { ':s0': 1 } }),
    ).toThrow(/:s0/);
    expect(() =>
      updateExpression({ remove: ['x'] }, { expression: 'attribute_exists(#r0)', names: { '#r0': 'y' } }),
    ).toThrow(/#r0/);
  });

  it('gives a condition the placeholders of the attributes it writes', () => {
    const update = updateExpression(
      { set: { name: 'New', priority: 2 }, remove: ['description'] },
      {
        expression: (at) =>
          `${at.name('name')} <> ${at.value('name')} OR ${at.name('priority')} <> ${at.value('priority')} OR attribute_exists(${at.name('description')})`,
      },
    );
    expect(update.ConditionExpression).toBe('#s0 <> :s0 OR #s1 <> :s1 OR attribute_exists(#r0)');
    expect(() => updateExpression({ set: { a: 1 } }, { expression: (at) => at.name('b') })).toThrow(/"b"/);
    expect(() => updateExpression({ remove: ['a'] }, { expression: (at) => at.value('a') })).toThrow(
      /removes "a"/,
    );
  });

  it('leaves out maps with nothing in them', () => {
    const update = updateExpression({ remove: ['a'] }, { expression: 'attribute_exists(pk)' });
    expect(update).toEqual({
      UpdateExpression: 'REMOVE #r0',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#r0': 'a' },
    });
    expect(Object.hasOwn(update, 'ExpressionAttributeValues')).toBe(false);
  });
});
