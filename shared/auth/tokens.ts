import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { bytesToUuid, uuidToBytes, uuidv7 } from '../ids';

/**
 * Credential formats. Organization credentials pack `orgId | credentialId | secret` into one
 * base64url string after the prefix, so authentication is a direct key lookup inside the right
 * organization (no global token index) followed by a constant-time hash comparison.
 */
export const tokenPrefixes = {
  apiKey: 'svc_sk_',
  operatorSession: 'svc_os_',
  visitorToken: 'svc_vt_',
  platformAdmin: 'svc_pa_',
  widgetKey: 'svc_wpk_',
} as const;

export type OrgTokenKind = Exclude<keyof typeof tokenPrefixes, 'platformAdmin'>;

const SECRET_BYTES = 32;
const PACKED_BYTES = 16 + 16 + SECRET_BYTES;

export interface MintedToken {
  token: string;
  credentialId: string;
  /** SHA-256 of the whole token, hex: the only form ever stored. */
  hash: string;
}

/** One-shot `crypto.hash` (Node ≥ 20.12): half the cost of createHash for a token-sized input. */
export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex');
}

export function mintOrgToken(kind: OrgTokenKind, orgId: string): MintedToken {
  const credentialId = uuidv7();
  const packed = Buffer.concat([uuidToBytes(orgId), uuidToBytes(credentialId), randomBytes(SECRET_BYTES)]);
  const token = `${tokenPrefixes[kind]}${packed.toString('base64url')}`;
  return { token, credentialId, hash: sha256Hex(token) };
}

export function mintPlatformToken(): string {
  return `${tokenPrefixes.platformAdmin}${randomBytes(SECRET_BYTES).toString('base64url')}`;
}

export interface ParsedOrgToken {
  kind: OrgTokenKind;
  orgId: string;
  credentialId: string;
  hash: string;
}

/** Reads an organization credential; anything malformed is simply `undefined` (→ 401). */
export function parseOrgToken(token: string): ParsedOrgToken | undefined {
  for (const kind of ['apiKey', 'operatorSession', 'visitorToken', 'widgetKey'] as const) {
    const prefix = tokenPrefixes[kind];
    if (!token.startsWith(prefix)) continue;
    const body = token.slice(prefix.length);
    if (!/^[A-Za-z0-9_-]+$/.test(body)) return undefined;
    const packed = Buffer.from(body, 'base64url');
    if (packed.length !== PACKED_BYTES || packed.toString('base64url') !== body) return undefined;
    return {
      kind,
      orgId: bytesToUuid(packed.subarray(0, 16)),
      credentialId: bytesToUuid(packed.subarray(16, 32)),
      hash: sha256Hex(token),
    };
  }
  return undefined;
}

const HEX_BYTES = /^(?:[0-9a-f]{2})+$/i;

/** Constant-time comparison of two hex digests; anything that is not whole hex bytes never matches. */
export function sameHash(a: string, b: string): boolean {
  if (!HEX_BYTES.test(a) || !HEX_BYTES.test(b)) return false;
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}
