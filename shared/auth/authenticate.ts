import { clock } from '../clock';
import { config } from '../config';
import { credentials } from '../db/credentials';
import { type Organization, organizations } from '../db/organizations';
import { ForbiddenError, UnauthorizedError } from '../errors';
import type { Caller, CallerKind, OrgCaller } from './caller';
import { parseOrgToken, sameHash, sha256Hex, tokenPrefixes } from './tokens';
import { TtlCache } from './ttl-cache';

export interface Authenticated {
  caller: Caller;
  /** Present for every organization caller. */
  organization?: Organization;
}

interface CachedOrgCaller {
  caller: OrgCaller;
  organization: Organization;
  /** When the credential itself expires (sessions, visitor tokens): the cache never outlives it. */
  credentialExpiresAtMs?: number;
}

/**
 * Warm instances trust what they read for `authCacheTtlMs`: a warm request needs no DynamoDB read to
 * authenticate. Revocation and organization changes clear matching entries in this instance at once;
 * other instances notice within the TTL (documented in the OpenAPI description).
 */
const cache = new TtlCache<CachedOrgCaller>(config.authCacheTtlMs, 10_000, clock.nowMs);

export const authCache = {
  forgetCredential(credentialId: string): void {
    cache.deleteWhere((entry) => entry.caller.credentialId === credentialId);
  },
  /** A merged or erased visitor's tokens, in this instance (others notice within the TTL). */
  forgetVisitor(orgId: string, visitorId: string): void {
    cache.deleteWhere(
      (entry) =>
        entry.caller.orgId === orgId &&
        entry.caller.kind === 'visitor' &&
        entry.caller.visitorId === visitorId,
    );
  },
  forgetOrganization(orgId: string): void {
    cache.deleteWhere((entry) => entry.organization.id === orgId);
  },
  /**
   * The organization as just written (the write's own answer): this instance's entries of it use
   * it at once, and the credentials need no read on their next request.
   */
  replaceOrganization(organization: Organization): void {
    cache.forEach((entry) => {
      if (entry.organization.id === organization.id) entry.organization = organization;
    });
  },
  clear: (): void => cache.clear(),
};

const BEARER = /^bearer\s+(\S+)\s*$/i;

interface PresentedCredential {
  token: string;
  via: 'authorization' | 'x-api-key' | 'x-widget-key';
}

function presentedCredential(headers: Readonly<Record<string, string>>): PresentedCredential | undefined {
  const authorization = headers.authorization;
  const apiKey = headers['x-api-key'];
  if (authorization !== undefined) {
    const match = BEARER.exec(authorization);
    if (!match?.[1]) throw new UnauthorizedError('Authorization must be "Bearer <token>"');
    // Generated SDKs fill every security scheme an operation lists, so the same key may come in both
    // headers: that is one credential. Two different ones stay refused.
    if (apiKey !== undefined && apiKey.trim() !== match[1]) {
      throw new UnauthorizedError(
        'Authorization and X-API-Key carry different credentials: send one API key, in either header or both',
      );
    }
    return { token: match[1], via: 'authorization' };
  }
  if (apiKey !== undefined) {
    if (!apiKey.startsWith(tokenPrefixes.apiKey))
      throw new UnauthorizedError('X-API-Key accepts only svc_sk_ keys');
    return { token: apiKey.trim(), via: 'x-api-key' };
  }
  const widgetKey = headers['x-widget-key'];
  if (widgetKey !== undefined) return { token: widgetKey.trim(), via: 'x-widget-key' };
  return undefined;
}

function authenticatePlatform(token: string): Authenticated {
  const expected = config.platformAdminTokenSha256;
  if (!expected || !sameHash(sha256Hex(token), expected))
    throw new UnauthorizedError('Invalid platform admin token');
  return { caller: { kind: 'platform', credentialId: 'platform-admin' } };
}

const wrongHeader = () =>
  new UnauthorizedError('Widget keys go in X-Widget-Key; other credentials in Authorization');

async function authenticateOrgToken(presented: PresentedCredential): Promise<Authenticated> {
  // A warm request hashes the token and stops at the cache: parsing is for misses only.
  const hash = sha256Hex(presented.token);
  const cached = cache.get(hash);
  if (cached) {
    if ((cached.caller.kind === 'widget') !== (presented.via === 'x-widget-key')) throw wrongHeader();
    if (cached.credentialExpiresAtMs !== undefined && cached.credentialExpiresAtMs <= clock.nowMs()) {
      throw new UnauthorizedError('This credential has expired');
    }
    return cached;
  }
  const parsed = parseOrgToken(presented.token);
  if (!parsed) throw new UnauthorizedError('Invalid credential');
  const isWidgetKey = parsed.kind === 'widgetKey';
  if (isWidgetKey !== (presented.via === 'x-widget-key')) throw wrongHeader();

  const resolved = isWidgetKey
    ? await resolveWidgetKey(parsed.orgId, presented.token)
    : await resolveStored(parsed);
  // An impersonation session is read on every use: ending it must take effect everywhere at once,
  // and every use is audited anyway.
  if (resolved.caller.kind !== 'operator' || !resolved.caller.impersonatedBy)
    cache.set(parsed.hash, resolved);
  return resolved;
}

async function resolveWidgetKey(orgId: string, token: string): Promise<CachedOrgCaller> {
  // The organization item carries its (public) widget key: one read.
  const organization = await organizations.get(orgId);
  if (!organization || !sameHash(sha256Hex(organization.widgetKey), sha256Hex(token))) {
    throw new UnauthorizedError('Invalid widget key');
  }
  return { caller: { kind: 'widget', orgId, credentialId: `widget:${orgId}` }, organization };
}

async function resolveStored(
  parsed: NonNullable<ReturnType<typeof parseOrgToken>>,
): Promise<CachedOrgCaller> {
  const kind = parsed.kind === 'widgetKey' ? 'apiKey' : parsed.kind;
  const { credential, organization } = await credentials.getWithOrganization(
    kind,
    parsed.orgId,
    parsed.credentialId,
  );
  if (!credential || !sameHash(credential.hash, parsed.hash))
    throw new UnauthorizedError('Invalid credential');
  if (credential.revokedAt) throw new UnauthorizedError('This credential has been revoked');
  if (credential.expiresAt !== undefined && credential.expiresAt * 1000 <= clock.nowMs()) {
    throw new UnauthorizedError('This credential has expired');
  }
  if (!organization) throw new ForbiddenError('The organization is unavailable');
  const base = { orgId: parsed.orgId, credentialId: parsed.credentialId };
  const credentialExpiresAtMs = credential.expiresAt === undefined ? undefined : credential.expiresAt * 1000;
  if (credential.kind === 'apiKey') {
    return {
      caller: {
        kind: 'apiKey',
        ...base,
        scopes: credential.scopes ?? [],
        name: credential.name ?? 'API key',
      },
      organization,
    };
  }
  if (credential.kind === 'operatorSession' && credential.operatorId && credential.role) {
    return {
      caller: {
        kind: 'operator',
        ...base,
        operatorId: credential.operatorId,
        role: credential.role,
        ...(credential.impersonatedBy ? { impersonatedBy: credential.impersonatedBy } : {}),
      },
      organization,
      credentialExpiresAtMs,
    };
  }
  if (credential.kind === 'visitorToken' && credential.visitorId) {
    // A merged or erased visitor's tokens are revoked by that change: no token item to find and mark.
    if (!(await credentials.visitorActive(parsed.orgId, credential.visitorId)))
      throw new UnauthorizedError('This credential has been revoked');
    return {
      caller: { kind: 'visitor', ...base, visitorId: credential.visitorId },
      organization,
      credentialExpiresAtMs,
    };
  }
  throw new UnauthorizedError('Invalid credential');
}

/**
 * Resolves the caller from the request headers. Public routes ignore credentials entirely;
 * every other route needs one that is valid (401) before its kind is checked against the route (403).
 */
export async function authenticate(
  headers: Readonly<Record<string, string>>,
  allowed: readonly CallerKind[],
): Promise<Authenticated> {
  if (allowed.includes('public')) return { caller: { kind: 'public' } };
  const presented = presentedCredential(headers);
  if (!presented) throw new UnauthorizedError();
  if (presented.token.startsWith(tokenPrefixes.platformAdmin)) {
    if (presented.via !== 'authorization') throw new UnauthorizedError('Invalid credential');
    return authenticatePlatform(presented.token);
  }
  return authenticateOrgToken(presented);
}
