import { describe, expect, it } from 'vitest';
import { TtlCache } from '../../shared/auth/ttl-cache';

/** A clock the test moves by hand. */
function manualClock(startMs = 1_000_000) {
  let nowMs = startMs;
  return {
    now: () => nowMs,
    advance(ms: number): void {
      nowMs += ms;
    },
  };
}

describe('TtlCache', () => {
  it('returns a value until its time to live has passed', () => {
    // Prepare
    const clock = manualClock();
    const cache = new TtlCache<string>(1_000, 10, clock.now);
    cache.set('k', 'v');

    // Act / Assess
    clock.advance(999);
    expect(cache.get('k')).toBe('v');
    clock.advance(1);
    expect(cache.get('k')).toBeUndefined();
  });

  it('restarts the time to live when a key is set again', () => {
    // Prepare
    const clock = manualClock();
    const cache = new TtlCache<string>(1_000, 10, clock.now);
    cache.set('k', 'old');
    clock.advance(800);

    // Act
    cache.set('k', 'new');
    clock.advance(800);

    // Assess
    expect(cache.get('k')).toBe('new');
  });

  it('stays expired: time going on does not resurrect an entry', () => {
    // Prepare
    const clock = manualClock();
    const cache = new TtlCache<number>(100, 10, clock.now);
    cache.set('k', 1);
    clock.advance(100);

    // Act
    const first = cache.get('k');
    clock.advance(-50);

    // Assess
    expect(first).toBeUndefined();
    expect(cache.get('k')).toBeUndefined();
  });

  it('evicts the oldest entry beyond maxEntries', () => {
    // Prepare
    const clock = manualClock();
    const cache = new TtlCache<number>(60_000, 3, clock.now);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);

    // Act
    cache.set('d', 4);

    // Assess
    expect(cache.get('a')).toBeUndefined();
    expect([cache.get('b'), cache.get('c'), cache.get('d')]).toEqual([2, 3, 4]);
  });

  it('counts a re-set key as the newest, so it outlives older entries', () => {
    // Prepare
    const cache = new TtlCache<number>(60_000, 2, manualClock().now);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('a', 10);

    // Act
    cache.set('c', 3);

    // Assess
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(10);
    expect(cache.get('c')).toBe(3);
  });

  it('does not evict anything when a present key is updated at capacity', () => {
    // Prepare
    const cache = new TtlCache<number>(60_000, 2, manualClock().now);
    cache.set('a', 1);
    cache.set('b', 2);

    // Act
    cache.set('b', 20);

    // Assess
    expect(cache.get('a')).toBe(1);
    expect(cache.get('b')).toBe(20);
  });

  it('forgets matching entries and everything on clear', () => {
    // Prepare
    const cache = new TtlCache<{ org: string }>(60_000, 10, manualClock().now);
    cache.set('1', { org: 'a' });
    cache.set('2', { org: 'b' });
    cache.set('3', { org: 'a' });

    // Act
    cache.deleteWhere((value) => value.org === 'a');

    // Assess
    expect([cache.get('1'), cache.get('2'), cache.get('3')]).toEqual([undefined, { org: 'b' }, undefined]);
    cache.clear();
    expect(cache.get('2')).toBeUndefined();
  });

  it('visits live entries only, for updates in place that keep their expiry', () => {
    // Prepare
    const clock = manualClock();
    const cache = new TtlCache<{ org: string; name: string }>(1_000, 10, clock.now);
    cache.set('old', { org: 'a', name: 'before' });
    clock.advance(600);
    cache.set('new', { org: 'a', name: 'before' });
    clock.advance(500);

    // Act
    const visited: string[] = [];
    cache.forEach((value) => {
      visited.push(value.name);
      value.name = 'after';
    });

    // Assess
    expect(visited).toEqual(['before']);
    expect(cache.get('old')).toBeUndefined();
    expect(cache.get('new')).toEqual({ org: 'a', name: 'after' });
    clock.advance(500);
    expect(cache.get('new')).toBeUndefined();
  });
});
