import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type CursorKeyRing,
  MIN_KEY_LENGTH,
  parseCursorKeyRing,
  rotateCursorKeyRing,
  verificationKeys,
} from '../../shared/cursor-key-ring';
import { CursorKeySource } from '../../shared/cursor-keys';
import { logger } from '../../shared/logger';

const key = (c: string) => c.repeat(MIN_KEY_LENGTH + 8);
const [A, B, C, D] = ['a', 'b', 'c', 'd'].map(key) as [string, string, string, string];

describe('cursor key ring', () => {
  it('reads a plain key (the format before rings, and local use) as the current key', () => {
    expect(parseCursorKeyRing(` ${A}\n`)).toEqual({ current: A });
  });

  it('reads a JSON ring and refuses one without a usable current key', () => {
    expect(parseCursorKeyRing(JSON.stringify({ current: A, next: B, previous: C }))).toEqual({
      current: A,
      next: B,
      previous: C,
    });
    expect(() => parseCursorKeyRing('{"next":"x"}')).toThrow(/current key/);
    expect(() => parseCursorKeyRing(JSON.stringify({ current: 'short' }))).toThrow(/current key/);
    expect(() => parseCursorKeyRing(JSON.stringify({ current: A, next: 'short' }))).toThrow(/next key/);
    expect(() => parseCursorKeyRing('{not json')).toThrow(/JSON/);
    expect(() => parseCursorKeyRing('  ')).toThrow(/empty/);
  });

  it('first announces a next key without changing the signing key, then moves every key one step', () => {
    const fresh = [B, C, D];
    const next = () => fresh.shift() ?? '';
    const first = rotateCursorKeyRing({ current: A }, next);
    expect(first).toEqual({ current: A, next: B });
    const second = rotateCursorKeyRing(first, next);
    expect(second).toEqual({ previous: A, current: B, next: C });
    expect(rotateCursorKeyRing(second, next)).toEqual({ previous: B, current: C, next: D });
  });

  it('keeps every cursor valid across a rotation, on stale and fresh instances alike', () => {
    // An instance that read the ring before a rotation, and one that read it after.
    let ring: CursorKeyRing = { current: A };
    for (let rotation = 0; rotation < 5; rotation += 1) {
      const before = ring;
      ring = rotateCursorKeyRing(ring);
      expect(verificationKeys(before)).toContain(ring.current);
      expect(verificationKeys(ring)).toContain(before.current);
    }
  });

  it('lists the signing key first', () => {
    expect(verificationKeys({ previous: C, current: A, next: B })).toEqual([A, B, C]);
    expect(verificationKeys({ current: A })).toEqual([A]);
  });
});

describe('CursorKeySource', () => {
  const secretArn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:cursor-AbCdEf';
  // The source's clock; the secret reader itself is tested in secrets.test.ts.
  const advance = (ms: number) => vi.setSystemTime(Date.now() + ms);
  let secret: () => Promise<string>;
  const asked: string[] = [];
  const answer = (ring: CursorKeyRing | string) => {
    secret = async () => (typeof ring === 'string' ? ring : JSON.stringify(ring));
  };
  const fail = (error: Error) => {
    secret = async () => {
      throw error;
    };
  };
  const reads = () => asked.length;
  const readSecret = (secretId: string) => {
    asked.push(secretId);
    return secret();
  };
  const source = (refreshSeconds = 300) => CursorKeySource.create({ secretArn, refreshSeconds, readSecret });

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    asked.length = 0;
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('uses the local key without any I/O when no secret is configured', async () => {
    const local = await CursorKeySource.create({ localKey: A });
    expect(local.keys()).toEqual({ current: A });
    expect(reads()).toBe(0);
    await expect(CursorKeySource.create({})).rejects.toThrow(/CURSOR_SIGNING_KEY_SECRET_ARN/);
  });

  it('reads the secret once when created, then answers from memory', async () => {
    answer({ current: A, next: B });
    const keys = await source();
    expect(reads()).toBe(1);
    expect(asked).toEqual([secretArn]);
    advance(299_000);
    for (let i = 0; i < 100; i += 1) expect(keys.keys()).toEqual({ current: A, next: B });
    expect(reads()).toBe(1);
  });

  it('reads nothing until loaded (the secrets extension answers only during invocations), then once', async () => {
    answer({ current: A, next: B });
    const keys = CursorKeySource.unloaded({ secretArn, readSecret });
    expect(reads()).toBe(0);
    expect(() => keys.keys()).toThrow(/not loaded/);
    await Promise.all([keys.load(), keys.load()]);
    await keys.load();
    expect(reads()).toBe(1);
    expect(keys.keys()).toEqual({ current: A, next: B });
  });

  it('retries a failed first load at the next one', async () => {
    fail(new Error('Secrets extension unreachable'));
    const keys = CursorKeySource.unloaded({ secretArn, readSecret });
    await expect(keys.load()).rejects.toThrow(/unreachable/);
    answer({ current: A });
    await keys.load();
    expect(keys.keys()).toEqual({ current: A });
    expect(reads()).toBe(2);
  });

  it('reads a plain-string secret (the format before rings) as the current key', async () => {
    answer(A);
    expect((await source()).keys()).toEqual({ current: A });
  });

  it('past its age, refreshes in the background and serves the ring in hand meanwhile', async () => {
    answer({ current: A, next: B });
    const keys = await source();
    answer({ previous: A, current: B, next: C });
    advance(300_001);
    expect(keys.keys()).toEqual({ current: A, next: B });
    await keys.settled();
    expect(keys.keys()).toEqual({ previous: A, current: B, next: C });
    expect(reads()).toBe(2);
  });

  it('keeps the ring in hand when a refresh fails, and tries again one period later', async () => {
    answer({ current: A, next: B });
    const keys = await source();
    fail(new Error('throttled'));
    const warn = vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    advance(300_001);
    keys.keys();
    await keys.settled();
    expect(keys.keys()).toEqual({ current: A, next: B });
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('not refreshed'), expect.anything());
    warn.mockRestore();
    expect(reads()).toBe(2);
    advance(1_000);
    keys.keys();
    expect(reads()).toBe(2);
  });

  it('fails the cold start when the secret cannot be read or holds no usable ring', async () => {
    fail(new Error('Secrets Manager AccessDeniedException: not allowed'));
    await expect(source()).rejects.toThrow(/AccessDenied/);
    answer(JSON.stringify({ current: 'short' }));
    await expect(source()).rejects.toThrow(/current key/);
  });
});
