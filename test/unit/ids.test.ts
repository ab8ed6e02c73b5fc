import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bytesToUuid, isUuid, uuidToBytes, uuidv7 } from '../../shared/ids';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** The 48-bit millisecond timestamp a UUIDv7 starts with. */
const msOf = (id: string): number => Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);
const MAX_MS = 2 ** 48 - 1;

describe('ids', () => {
  it('makes lower-case RFC 9562 version 7 UUIDs carrying the current time', () => {
    // Prepare
    const before = Date.now();

    // Act
    const id = uuidv7();

    // Assess
    expect(id).toMatch(V7);
    expect(msOf(id)).toBeGreaterThanOrEqual(before);
    expect(msOf(id)).toBeLessThanOrEqual(Date.now());
  });

  it('encodes the given millisecond exactly', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_MS }), (ms) => {
        const id = uuidv7(ms);
        expect(id).toMatch(V7);
        expect(msOf(id)).toBe(ms);
      }),
    );
  });

  it('sorts by time: an id of a later millisecond sorts after an earlier one, as a string', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: MAX_MS - 1 }),
        fc.integer({ min: 1, max: 10_000_000 }),
        (earlier, gap) => {
          const later = Math.min(MAX_MS, earlier + gap);
          expect(uuidv7(earlier) < uuidv7(later)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('does not repeat within one millisecond', () => {
    // Act
    const ids = new Set(Array.from({ length: 1000 }, () => uuidv7(1_800_000_000_000)));

    // Assess
    expect(ids.size).toBe(1000);
  });

  it('recognizes UUIDs of any version and case, and nothing else', () => {
    // Act / Assess
    expect(isUuid(uuidv7())).toBe(true);
    expect(isUuid(crypto.randomUUID())).toBe(true);
    expect(isUuid('00000000-0000-0000-0000-000000000000')).toBe(true);
    expect(isUuid(uuidv7().toUpperCase())).toBe(true);
    for (const notUuid of [
      '',
      'not-a-uuid',
      uuidv7().replaceAll('-', ''),
      `${uuidv7()}0`,
      ` ${uuidv7()}`,
      `${uuidv7()}\n`,
      '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4g5h',
    ]) {
      expect(isUuid(notUuid), JSON.stringify(notUuid)).toBe(false);
    }
  });

  it('packs a UUID into 16 bytes and back', () => {
    fc.assert(
      fc.property(fc.uuid(), (id) => {
        const bytes = uuidToBytes(id);
        expect(bytes).toHaveLength(16);
        expect(bytesToUuid(bytes)).toBe(id.toLowerCase());
      }),
    );
  });
});

describe('uuidv7 within one millisecond', () => {
  it('is strictly increasing, so events minted together keep their order', () => {
    const ms = Date.parse('2026-11-22T00:00:00.000Z');
    const ids = Array.from({ length: 1000 }, () => uuidv7(ms));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
