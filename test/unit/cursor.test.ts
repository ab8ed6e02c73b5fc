import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cursorKeys } from '../../shared/cursor-keys';
import { decodeCursor, encodeCursor } from '../../shared/db/cursor';
import { BadRequestError } from '../../shared/errors';
import { uuidv7 } from '../../shared/ids';

const orgId = uuidv7();
const queryId = 'conversations:status=open';
const startKey = { pk: `ORG#${orgId}#CONVS`, sk: 'x', gsi1sk: '2026-11-21T10:00:00.000Z#abc' };

/** A cursor signed with the real key: what an attacker who had the key could build. */
function signed(payloadJson: string, key = cursorKeys.keys().current): string {
  const payload = Buffer.from(payloadJson).toString('base64url');
  const signature = createHmac('sha256', key).update(payload).digest('base64url');
  return `${payload}.${signature}`;
}

function expectBadRequest(action: () => unknown): void {
  let thrown: unknown;
  try {
    action();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(BadRequestError);
  expect(thrown).toMatchObject({ code: 'BAD_REQUEST', details: { field: 'cursor' } });
}

describe('cursor', () => {
  it('round-trips the start key for the same organization and query', () => {
    // Act
    const cursor = encodeCursor(orgId, queryId, startKey);

    // Assess
    expect(decodeCursor(cursor, orgId, queryId)).toEqual(startKey);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it('round-trips any JSON start key', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (key) => {
        const decoded = decodeCursor(encodeCursor(orgId, queryId, key), orgId, queryId);
        expect(decoded).toEqual(JSON.parse(JSON.stringify(key)));
      }),
      { numRuns: 200 },
    );
  });

  it('refuses a cursor whose payload was altered', () => {
    // Prepare
    const [payload, signature] = encodeCursor(orgId, queryId, startKey).split('.') as [string, string];
    const forgedPayload = Buffer.from(
      JSON.stringify({ o: orgId, q: queryId, k: { ...startKey, pk: 'ORG#someone-else#CONVS' } }),
    ).toString('base64url');

    // Act / Assess
    expectBadRequest(() => decodeCursor(`${forgedPayload}.${signature}`, orgId, queryId));
    expectBadRequest(() => decodeCursor(`${payload.slice(1)}.${signature}`, orgId, queryId));
    expectBadRequest(() =>
      decodeCursor(
        `${payload.slice(0, 5)}${payload[5] === 'A' ? 'B' : 'A'}${payload.slice(6)}.${signature}`,
        orgId,
        queryId,
      ),
    );
  });

  it('refuses a cursor whose signature was altered in a significant character or truncated', () => {
    // Prepare
    const [payload, signature] = encodeCursor(orgId, queryId, startKey).split('.') as [string, string];
    const flipped = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;

    // Act / Assess
    expectBadRequest(() => decodeCursor(`${payload}.${flipped}`, orgId, queryId));
    expectBadRequest(() => decodeCursor(`${payload}.${signature.slice(0, -4)}`, orgId, queryId));
    expectBadRequest(() => decodeCursor(`${payload}.`, orgId, queryId));
    expectBadRequest(() => decodeCursor(payload, orgId, queryId));
  });

  it('refuses a signature altered only where base64url decoding is lenient', () => {
    // Prepare
    const [payload, signature] = encodeCursor(orgId, queryId, startKey).split('.') as [string, string];
    const last = signature.at(-1) ?? 'A';
    const variants = [
      `${signature.slice(0, -1)}${last === 'E' ? 'F' : String.fromCharCode(last.charCodeAt(0) ^ 1)}`,
      `${signature}=`,
      `${signature}!`,
      `${signature} `,
      `${signature.slice(0, 10)}!${signature.slice(10)}`,
    ];

    // Act / Assess
    for (const variant of variants)
      expectBadRequest(() => decodeCursor(`${payload}.${variant}`, orgId, queryId));
  });

  it('refuses a cursor of another organization', () => {
    // Prepare
    const cursor = encodeCursor(uuidv7(), queryId, startKey);

    // Act / Assess
    expectBadRequest(() => decodeCursor(cursor, orgId, queryId));
  });

  it('refuses a cursor of another listing or filter', () => {
    // Prepare
    const cursor = encodeCursor(orgId, 'conversations:status=closed', startKey);

    // Act / Assess
    expectBadRequest(() => decodeCursor(cursor, orgId, queryId));
  });

  it('refuses a correctly signed payload that is not a cursor', () => {
    // Act / Assess
    expectBadRequest(() => decodeCursor(signed('not json'), orgId, queryId));
    expectBadRequest(() =>
      decodeCursor(signed(JSON.stringify({ o: orgId, q: queryId, k: null })), orgId, queryId),
    );
    expectBadRequest(() =>
      decodeCursor(signed(JSON.stringify({ o: orgId, q: queryId, k: 'pk' })), orgId, queryId),
    );
    expectBadRequest(() => decodeCursor(signed(JSON.stringify({ o: orgId, q: queryId })), orgId, queryId));
  });

  it('refuses a cursor with an extra segment', () => {
    // Prepare
    const cursor = encodeCursor(orgId, queryId, startKey);

    // Act / Assess
    expectBadRequest(() => decodeCursor(`${cursor}.x`, orgId, queryId));
  });

  it('answers 400 for any garbage, never another error', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.base64String(), fc.string({ unit: 'binary' })), (garbage) => {
        expectBadRequest(() => decodeCursor(garbage, orgId, queryId));
      }),
      { numRuns: 500 },
    );
  });

  describe('across a key rotation', () => {
    const [previous, current, next, retired] = ['p', 'c', 'n', 'r'].map((c) => c.repeat(40)) as [
      string,
      string,
      string,
      string,
    ];
    const cursorOf = (key: string) => signed(JSON.stringify({ o: orgId, q: queryId, k: startKey }), key);
    afterEach(() => vi.restoreAllMocks());

    it('signs with the current key and accepts the previous and the announced next one', () => {
      // Prepare
      vi.spyOn(cursorKeys, 'keys').mockReturnValue({ previous, current, next });

      // Act
      const cursor = encodeCursor(orgId, queryId, startKey);

      // Assess
      expect(cursor).toBe(cursorOf(current));
      for (const key of [previous, current, next]) {
        expect(decodeCursor(cursorOf(key), orgId, queryId)).toEqual(startKey);
      }
    });

    it('refuses a cursor signed with a key that left the ring', () => {
      // Prepare
      vi.spyOn(cursorKeys, 'keys').mockReturnValue({ previous, current, next });

      // Act / Assess
      expectBadRequest(() => decodeCursor(cursorOf(retired), orgId, queryId));
    });
  });
});
