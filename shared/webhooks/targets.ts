import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Webhook target check (SSRF guard). A customer chooses the URL, our Lambda makes the request, so a
 * URL pointing inside the VPC, at the instance metadata service or at loopback must never be
 * fetched. This check runs on create, update and before every delivery; the delivery client repeats
 * the address check at connect time, because DNS may answer differently by then (rebinding).
 */

/** Resolves a hostname to every address it has; injectable so tests need no network. */
export type HostLookup = (host: string) => Promise<string[]>;

export type TargetRefusal =
  | 'invalid_url'
  | 'credentials_in_url'
  | 'https_required'
  | 'non_public_address'
  | 'unresolvable';

export type TargetCheck =
  | { ok: true; url: URL; allowedOverride: boolean }
  | { ok: false; reason: TargetRefusal };

export interface TargetCheckOptions {
  /** `host:port` entries from WEBHOOK_ALLOWED_TARGETS (see `parseAllowedTargets`). */
  allowed: ReadonlySet<string>;
  lookup?: HostLookup;
}

/** `verbatim` keeps the resolver's order and both families: every address is checked, not just the first. */
export const systemLookup: HostLookup = async (host) =>
  (await dns.lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/** WEBHOOK_ALLOWED_TARGETS: comma-separated `host:port`, empty by default (development and tests only). */
export function parseAllowedTargets(raw: string | undefined): Set<string> {
  const targets = new Set<string>();
  for (const entry of (raw ?? '').split(',')) {
    const target = entry.trim().toLowerCase();
    if (target) targets.add(target);
  }
  return targets;
}

/**
 * True only for global unicast. `process` unwraps IPv4-mapped IPv6 (`::ffff:127.0.0.1`) so it is
 * classified as the IPv4 address it reaches; every special range (loopback, private, link-local with
 * the 169.254.169.254 metadata service, CGNAT, multicast, unspecified, unique-local, reserved, NAT64,
 * 6to4, Teredo ...) is something other than 'unicast'. Only canonical literals (`net.isIP`) are read:
 * ipaddr.js also accepts shorthand like `127.1`, which must never reach the resolver as an "address".
 */
export function isPublicAddress(address: string): boolean {
  if (isIP(address) === 0) return false;
  try {
    return ipaddr.process(address).range() === 'unicast';
  } catch {
    return false;
  }
}

/** The `host:port` an allow-list entry is compared with, the port defaulting from the scheme. */
export function targetKey(url: URL): string {
  return `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
}

/** The URL's host as a bare address when it is an IP literal (IPv6 brackets stripped), else undefined. */
export function ipLiteral(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) === 0 ? undefined : host;
}

/**
 * Everything that can be decided without DNS. The WHATWG parser normalizes numeric IPv4 spellings
 * (`2130706433`, `0177.0.0.1`, `0x7f.0.0.1`) to dotted form first, so they are caught as literals.
 */
export function checkTargetUrl(rawUrl: string, allowed: ReadonlySet<string>): TargetCheck {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return { ok: false, reason: 'invalid_url' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: 'https_required' };
  if (url.username || url.password) return { ok: false, reason: 'credentials_in_url' };
  if (allowed.has(targetKey(url))) return { ok: true, url, allowedOverride: true };
  if (url.protocol !== 'https:') return { ok: false, reason: 'https_required' };
  const literal = ipLiteral(url);
  if (literal !== undefined && !isPublicAddress(literal)) return { ok: false, reason: 'non_public_address' };
  return { ok: true, url, allowedOverride: false };
}

/** Whether every address a host resolves to is public; a host with no address is unresolvable. */
export async function resolvePublic(
  host: string,
  lookup: HostLookup = systemLookup,
): Promise<{ ok: true; addresses: string[] } | { ok: false; reason: 'non_public_address' | 'unresolvable' }> {
  let addresses: string[];
  try {
    addresses = await lookup(host);
  } catch {
    return { ok: false, reason: 'unresolvable' };
  }
  if (addresses.length === 0) return { ok: false, reason: 'unresolvable' };
  if (!addresses.every(isPublicAddress)) return { ok: false, reason: 'non_public_address' };
  return { ok: true, addresses };
}

/** The full check: URL rules, then every resolved address must be public (allow-listed targets skip it). */
export async function checkTarget(rawUrl: string, options: TargetCheckOptions): Promise<TargetCheck> {
  const checked = checkTargetUrl(rawUrl, options.allowed);
  if (!checked.ok || checked.allowedOverride || ipLiteral(checked.url) !== undefined) return checked;
  const resolved = await resolvePublic(checked.url.hostname, options.lookup);
  return resolved.ok ? checked : { ok: false, reason: resolved.reason };
}
