import { describe, expect, it } from 'vitest';
import { nestsDeeperThan } from '../../shared/http/json-depth';
import { FREE_JSON_MAX_BYTES, freeJsonProblem, nestingDepth } from '../../shared/schemas/free-json';

describe('nestsDeeperThan (before parsing)', () => {
  it('counts objects and arrays, not brackets inside strings or after escaped quotes', () => {
    expect(nestsDeeperThan('{"a":[{"b":1}]}', 3)).toBe(false);
    expect(nestsDeeperThan('{"a":[{"b":1}]}', 2)).toBe(true);
    expect(nestsDeeperThan('{"a":"[[[[{{{{"}', 1)).toBe(false);
    expect(nestsDeeperThan('{"a":"\\"[[[["}', 1)).toBe(false);
    expect(nestsDeeperThan('{"a":"\\\\","b":[[[1]]]}', 3)).toBe(true);
    expect(nestsDeeperThan(`${'['.repeat(100_000)}${']'.repeat(100_000)}`, 64)).toBe(true);
  });
});

describe('free-form JSON bounds', () => {
  it('measures depth without recursion and names the broken bound', () => {
    let deep: unknown = 0;
    for (let i = 0; i < 50_000; i++) deep = [deep];
    expect(nestingDepth(deep)).toBe(50_000);
    expect(nestingDepth({ a: 1 })).toBe(1);
    expect(nestingDepth('text')).toBe(0);
    expect(freeJsonProblem({ a: { b: { c: { d: { e: { f: { g: { h: 1 } } } } } } } })).toBeUndefined();
    expect(freeJsonProblem({ a: { b: { c: { d: { e: { f: { g: { h: { i: 1 } } } } } } } } })).toMatch(
      /9 levels/,
    );
    expect(freeJsonProblem({ a: 'é'.repeat(FREE_JSON_MAX_BYTES / 2) })).toMatch(/bytes/);
  });
});
