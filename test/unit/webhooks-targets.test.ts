import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkTarget,
  type HostLookup,
  isPublicAddress,
  parseAllowedTargets,
} from '../../shared/webhooks/targets';

const PUBLIC_V4 = '93.184.216.34';
const PUBLIC_V6 = '2606:2800:220:1:248:1893:25c8:1946';
const none = new Set<string>();

/** A resolver with fixed answers; an unknown host fails like ENOTFOUND. Never touches the network. */
function fakeLookup(answers: Record<string, string[]>): HostLookup {
  return async (host) => {
    const addresses = answers[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses;
  };
}

const lookup = fakeLookup({
  localhost: ['127.0.0.1', '::1'],
  'mixed.example': [PUBLIC_V4, '10.0.0.5'],
  'mapped.example': ['::ffff:169.254.169.254'],
  'public.example': [PUBLIC_V4, PUBLIC_V6],
  'empty.example': [],
});

describe('parseAllowedTargets', () => {
  it('reads comma-separated host:port entries, trimmed and lower-cased', () => {
    expect(parseAllowedTargets(' LocalHost:3000 , 127.0.0.1:8080,,')).toEqual(
      new Set(['localhost:3000', '127.0.0.1:8080']),
    );
    expect(parseAllowedTargets(undefined)).toEqual(new Set());
    expect(parseAllowedTargets('')).toEqual(new Set());
  });
});

describe('isPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '240.0.0.1',
    '::',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'ff02::1',
    '64:ff9b::a9fe:a9fe',
    '2002:7f00:1::',
    'not-an-address',
    '127.1',
    '',
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each([PUBLIC_V4, '8.8.8.8', PUBLIC_V6, '::ffff:93.184.216.34'])('admits %s', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it('never calls an address in 127/8, 10/8 or 192.168/16 public', () => {
    const byte = fc.integer({ min: 0, max: 255 });
    const privateV4 = fc.oneof(
      fc.tuple(byte, byte, byte).map(([b, c, d]) => `127.${b}.${c}.${d}`),
      fc.tuple(byte, byte, byte).map(([b, c, d]) => `10.${b}.${c}.${d}`),
      fc.tuple(byte, byte).map(([c, d]) => `192.168.${c}.${d}`),
    );
    fc.assert(
      fc.property(privateV4, fc.boolean(), (address, mapped) => {
        expect(isPublicAddress(mapped ? `::ffff:${address}` : address)).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('checkTarget', () => {
  it.each([
    'https://127.0.0.1/',
    'https://localhost/',
    'https://10.0.0.1/',
    'https://172.16.5.4/',
    'https://192.168.1.1/',
    'https://169.254.169.254/latest/meta-data',
    'https://100.64.0.1/',
    'https://[::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:7f00:1]/',
    'https://2130706433/',
    'https://0177.0.0.1/',
    'https://0x7f.0.0.1/',
    'https://127.1/',
    'https://0.0.0.0/',
    'https://[::]/',
    'https://[fc00::1]/',
    'https://[fe80::1]/',
    'https://224.0.0.1/',
    'https://mixed.example/hook',
    'https://mapped.example/hook',
  ])('refuses %s as non_public_address', async (url) => {
    // Act
    const result = await checkTarget(url, { allowed: none, lookup });

    // Assess
    expect(result).toEqual({ ok: false, reason: 'non_public_address' });
  });

  it.each([
    ['http://2130706433/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://0x7f.0.0.1/', '127.0.0.1'],
    ['http://[::ffff:7f00:1]/', '[::ffff:7f00:1]'],
  ])('relies on WHATWG URL normalizing %s to %s', (raw, hostname) => {
    expect(new URL(raw).hostname).toBe(hostname);
  });

  it('refuses plain http to a public host', async () => {
    expect(await checkTarget('http://public.example/hook', { allowed: none, lookup })).toEqual({
      ok: false,
      reason: 'https_required',
    });
    expect(await checkTarget(`http://${PUBLIC_V4}/`, { allowed: none, lookup })).toEqual({
      ok: false,
      reason: 'https_required',
    });
  });

  it.each(['ftp://public.example/', 'file:///etc/passwd', 'gopher://public.example/'])(
    'refuses the non-http scheme %s',
    async (url) => {
      expect(await checkTarget(url, { allowed: none, lookup })).toEqual({
        ok: false,
        reason: 'https_required',
      });
    },
  );

  it.each([
    'https://user:pass@public.example/',
    'https://user@public.example/',
    'https://:pass@public.example/',
  ])('refuses credentials in %s', async (url) => {
    expect(await checkTarget(url, { allowed: none, lookup })).toEqual({
      ok: false,
      reason: 'credentials_in_url',
    });
  });

  it('refuses credentials even for an allow-listed target', async () => {
    const allowed = parseAllowedTargets('127.0.0.1:8080');
    expect(await checkTarget('http://u:p@127.0.0.1:8080/', { allowed, lookup })).toEqual({
      ok: false,
      reason: 'credentials_in_url',
    });
  });

  it.each(['not a url', '', 'https://', '//public.example/'])('refuses the unparsable %j', async (url) => {
    expect(await checkTarget(url, { allowed: none, lookup })).toEqual({ ok: false, reason: 'invalid_url' });
  });

  it.each(['https://unknown.example/', 'https://empty.example/'])(
    'refuses %s, which resolves to nothing',
    async (url) => {
      expect(await checkTarget(url, { allowed: none, lookup })).toEqual({
        ok: false,
        reason: 'unresolvable',
      });
    },
  );

  it('admits a public IP literal without any lookup', async () => {
    // Prepare
    const noLookup: HostLookup = async () => {
      throw new Error('an IP literal must not be resolved');
    };

    // Act
    const v4 = await checkTarget(`https://${PUBLIC_V4}/hook`, { allowed: none, lookup: noLookup });
    const v6 = await checkTarget(`https://[${PUBLIC_V6}]:8443/hook`, { allowed: none, lookup: noLookup });

    // Assess
    expect(v4).toMatchObject({ ok: true, allowedOverride: false });
    expect(v6).toMatchObject({ ok: true, allowedOverride: false });
  });

  it('admits a hostname that resolves only to public addresses', async () => {
    const result = await checkTarget('https://public.example/hook?x=1', { allowed: none, lookup });

    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.allowedOverride).toBe(false);
      expect(result.url.href).toBe('https://public.example/hook?x=1');
    }
  });

  it('admits an allow-listed host:port over http with no address check', async () => {
    // Prepare
    const allowed = parseAllowedTargets('localhost:4010,127.0.0.1:80');
    const noLookup: HostLookup = async () => {
      throw new Error('an allow-listed target must not be resolved');
    };

    // Act
    const byName = await checkTarget('http://LOCALHOST:4010/hooks', { allowed, lookup: noLookup });
    const defaultPort = await checkTarget('http://127.0.0.1/hooks', { allowed, lookup: noLookup });
    const otherPort = await checkTarget('http://localhost:4011/hooks', { allowed, lookup: noLookup });
    const httpsDefault = await checkTarget('https://127.0.0.1/hooks', { allowed, lookup: noLookup });

    // Assess
    expect(byName).toMatchObject({ ok: true, allowedOverride: true });
    expect(defaultPort).toMatchObject({ ok: true, allowedOverride: true });
    expect(otherPort).toEqual({ ok: false, reason: 'https_required' });
    expect(httpsDefault).toEqual({ ok: false, reason: 'non_public_address' });
  });
});
