import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  mintOrgToken,
  mintPlatformToken,
  type OrgTokenKind,
  parseOrgToken,
  sameHash,
  sha256Hex,
  tokenPrefixes,
} from '../../shared/auth/tokens';
import { uuidv7 } from '../../shared/ids';

const orgKinds: readonly OrgTokenKind[] = ['apiKey', 'operatorSession', 'visitorToken', 'widgetKey'];
const expectedPrefix: Record<OrgTokenKind, string> = {
  apiKey: 'svc_sk_',
  operatorSession: 'svc_os_',
  visitorToken: 'svc_vt_',
  widgetKey: 'svc_wpk_',
};
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** The token with the character at `index` replaced by a different base64url character. */
function withCharChanged(token: string, index: number, shift: number): string {
  const current = token[index] ?? 'A';
  const position = BASE64URL.indexOf(current);
  const replacement = BASE64URL[(position + 1 + (shift % 63)) % 64] ?? 'A';
  return `${token.slice(0, index)}${replacement}${token.slice(index + 1)}`;
}

describe('tokens', () => {
  it.each(orgKinds)(
    'mints %s tokens with the contract prefix that parse back to their org and id',
    (kind) => {
      // Prepare
      const orgId = uuidv7();

      // Act
      const minted = mintOrgToken(kind, orgId);
      const parsed = parseOrgToken(minted.token);

      // Assess
      expect(minted.token.startsWith(expectedPrefix[kind])).toBe(true);
      expect(parsed).toEqual({ kind, orgId, credentialId: minted.credentialId, hash: minted.hash });
      expect(minted.hash).toBe(sha256Hex(minted.token));
      expect(minted.hash).toMatch(/^[0-9a-f]{64}$/);
    },
  );

  it('mints platform admin tokens with svc_pa_, which never parse as organization tokens', () => {
    // Act
    const token = mintPlatformToken();

    // Assess
    expect(token.startsWith(tokenPrefixes.platformAdmin)).toBe(true);
    expect(parseOrgToken(token)).toBeUndefined();
  });

  it('mints a different secret every time', () => {
    // Prepare
    const orgId = uuidv7();

    // Act
    const tokens = new Set(Array.from({ length: 50 }, () => mintOrgToken('apiKey', orgId).token));

    // Assess
    expect(tokens.size).toBe(50);
  });

  it('rejects a token whose one character was changed, by parsing or by the hash comparison', () => {
    // Prepare
    const minted = mintOrgToken('apiKey', uuidv7());
    const positions = fc.integer({ min: 0, max: minted.token.length - 1 });

    fc.assert(
      fc.property(positions, fc.nat(), (index, shift) => {
        // Act
        const altered = withCharChanged(minted.token, index, shift);
        const parsed = parseOrgToken(altered);

        // Assess
        expect(altered).not.toBe(minted.token);
        if (parsed) expect(sameHash(parsed.hash, minted.hash)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('rejects tokens of the wrong length', () => {
    // Prepare
    const { token } = mintOrgToken('operatorSession', uuidv7());

    // Act / Assess
    expect(parseOrgToken(token.slice(0, -1))).toBeUndefined();
    expect(parseOrgToken(token.slice(0, -4))).toBeUndefined();
    expect(parseOrgToken(`${token}A`)).toBeUndefined();
    expect(parseOrgToken(`${token}AAAA`)).toBeUndefined();
    expect(parseOrgToken(tokenPrefixes.operatorSession)).toBeUndefined();
  });

  it('rejects a non-canonical encoding of the same bytes (padding, other alphabet)', () => {
    // Prepare
    const { token } = mintOrgToken('apiKey', uuidv7());

    // Act / Assess
    expect(parseOrgToken(`${token}==`)).toBeUndefined();
    expect(parseOrgToken(`${token.slice(0, -1)}+`)).toBeUndefined();
    expect(parseOrgToken(`${token.slice(0, -1)}/`)).toBeUndefined();
    expect(parseOrgToken(` ${token}`)).toBeUndefined();
  });

  it('rejects a token presented with another kind of prefix as that kind, never as the original', () => {
    // Prepare
    const orgId = uuidv7();
    const minted = mintOrgToken('visitorToken', orgId);
    const asApiKey = minted.token.replace(tokenPrefixes.visitorToken, tokenPrefixes.apiKey);

    // Act
    const parsed = parseOrgToken(asApiKey);

    // Assess: the ids still parse, but the hash is of another string, so no stored credential matches.
    expect(parsed?.kind).toBe('apiKey');
    expect(sameHash(parsed?.hash ?? '', minted.hash)).toBe(false);
  });

  it('never throws on arbitrary input, and accepts only prefixed tokens', () => {
    const prefixed = fc
      .tuple(fc.constantFrom(...Object.values(tokenPrefixes)), fc.string({ maxLength: 120 }))
      .map(([prefix, rest]) => `${prefix}${rest}`);
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 120 }), prefixed),
        (input) => {
          const parsed = parseOrgToken(input);
          if (parsed) expect(input.startsWith(expectedPrefix[parsed.kind])).toBe(true);
        },
      ),
      { numRuns: 400 },
    );
  });

  describe('sameHash', () => {
    it('is true for the same digest, whatever its hex case', () => {
      // Prepare
      const digest = sha256Hex('svc_sk_something');

      // Act / Assess
      expect(sameHash(digest, digest)).toBe(true);
      expect(sameHash(digest, digest.toUpperCase())).toBe(true);
    });

    it('is false for different digests', () => {
      fc.assert(
        fc.property(fc.string(), fc.string(), (a, b) => {
          fc.pre(a !== b);
          expect(sameHash(sha256Hex(a), sha256Hex(b))).toBe(false);
        }),
      );
    });

    it('is false for empty, non-hex or differently sized input', () => {
      // Prepare
      const digest = sha256Hex('x');

      // Act / Assess
      expect(sameHash('', '')).toBe(false);
      expect(sameHash(digest, '')).toBe(false);
      expect(sameHash('', digest)).toBe(false);
      expect(sameHash('zz', 'zz')).toBe(false);
      expect(sameHash(digest, digest.slice(0, 62))).toBe(false);
      expect(sameHash(digest, `${digest}00`)).toBe(false);
      // Buffer.from(hex) drops an odd last digit and stops at the first non-hex character.
      expect(sameHash('abc', 'abd')).toBe(false);
      expect(sameHash('ab', 'abzz')).toBe(false);
      expect(sameHash(digest, `${digest}0`)).toBe(false);
      expect(sameHash(digest, `${digest}zz`)).toBe(false);
    });
  });
});
