import { Webhook } from 'standardwebhooks';
import { describe, expect, it, vi } from 'vitest';
import { openSecret, sealSecret } from '../../shared/webhooks/secret-box';
import {
  generateSecret,
  isValidSecret,
  signatureHeader,
  webhookHeaders,
} from '../../shared/webhooks/signing';

const ORG = '0190a3c4-7e51-7000-8000-0000000000aa';
const nowSeconds = (): number => Math.floor(Date.now() / 1000);
const message = () => ({
  id: 'evt_0190a3c4-7e51-7000-8000-000000000001',
  timestamp: nowSeconds(),
  body: JSON.stringify({ id: 'evt_1', type: 'conversation.created', data: { subject: 'héllo ✓' } }),
});

describe('webhook signing', () => {
  it('generates whsec_ secrets of 32 random bytes', () => {
    const secrets = Array.from({ length: 50 }, generateSecret);

    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
      expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
      expect(isValidSecret(secret)).toBe(true);
    }
    expect(new Set(secrets).size).toBe(secrets.length);
  });

  it.each([
    ['no prefix', Buffer.alloc(32, 1).toString('base64')],
    ['too short', `whsec_${Buffer.alloc(23, 1).toString('base64')}`],
    ['not base64', 'whsec_!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!'],
    ['empty', 'whsec_'],
  ])('rejects a secret with %s', (_label, secret) => {
    expect(isValidSecret(secret)).toBe(false);
    expect(() => signatureHeader(message(), [secret])).toThrow();
  });

  it('accepts an externally supplied 24-byte secret', () => {
    expect(isValidSecret(`whsec_${Buffer.alloc(24, 7).toString('base64')}`)).toBe(true);
  });

  it('produces headers the standardwebhooks library verifies', () => {
    // Prepare
    const secret = generateSecret();
    const signed = message();

    // Act
    const headers = webhookHeaders(signed, [secret]);

    // Assess
    expect(headers['content-type']).toBe('application/json');
    expect(headers['webhook-id']).toBe(signed.id);
    expect(headers['webhook-timestamp']).toBe(String(signed.timestamp));
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(secret).verify(signed.body, headers)).toEqual(JSON.parse(signed.body));
  });

  it('matches the library signature byte for byte', () => {
    const secret = generateSecret();
    const signed = message();

    expect(signatureHeader(signed, [secret])).toBe(
      new Webhook(secret).sign(signed.id, new Date(signed.timestamp * 1000), signed.body),
    );
  });

  it('signs with both secrets during a rotation, and either one verifies', () => {
    // Prepare
    const [oldSecret, newSecret] = [generateSecret(), generateSecret()];
    const signed = message();

    // Act
    const headers = webhookHeaders(signed, [oldSecret, newSecret]);

    // Assess
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => new Webhook(oldSecret).verify(signed.body, headers)).not.toThrow();
    expect(() => new Webhook(newSecret).verify(signed.body, headers)).not.toThrow();
    expect(() => new Webhook(generateSecret()).verify(signed.body, headers)).toThrow();
  });

  it('fails verification when the body, id or timestamp changes', () => {
    const secret = generateSecret();
    const signed = message();
    const headers = webhookHeaders(signed, [secret]);
    const verifier = new Webhook(secret);

    expect(() => verifier.verify(`${signed.body} `, headers)).toThrow();
    expect(() => verifier.verify(signed.body, { ...headers, 'webhook-id': 'evt_other' })).toThrow();
    expect(() =>
      verifier.verify(signed.body, { ...headers, 'webhook-timestamp': String(signed.timestamp - 1) }),
    ).toThrow();
  });

  it('refuses to sign with no secret or a fractional timestamp', () => {
    expect(() => signatureHeader(message(), [])).toThrow();
    expect(() => signatureHeader({ ...message(), timestamp: 1.5 }, [generateSecret()])).toThrow();
  });
});

describe('secret box', () => {
  it('round-trips a secret in the v1 format', async () => {
    const secret = generateSecret();

    const sealed = await sealSecret(secret, ORG);

    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(await openSecret(sealed, ORG)).toBe(secret);
  });

  it('never contains the plaintext, in clear or base64, and seals differently every time', async () => {
    const secret = generateSecret();
    const body = secret.slice('whsec_'.length);

    const first = await sealSecret(secret, ORG);
    const second = await sealSecret(secret, ORG);

    for (const sealed of [first, second]) {
      expect(sealed).not.toContain(secret);
      expect(sealed).not.toContain(body.slice(0, 16));
      expect(sealed).not.toContain(Buffer.from(secret).toString('base64url').slice(0, 16));
    }
    expect(first).not.toBe(second);
  });

  it('throws when any character of the sealed value is changed', async () => {
    // Prepare
    const sealed = await sealSecret(generateSecret(), ORG);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

    // Act + Assess: every position after the version, each replaced by a different character
    for (let index = 3; index < sealed.length; index++) {
      const current = sealed[index] ?? '';
      if (current === '.') continue;
      const replacement = alphabet[(alphabet.indexOf(current) + 1 + (index % 60)) % alphabet.length] ?? 'A';
      const tampered = `${sealed.slice(0, index)}${replacement}${sealed.slice(index + 1)}`;
      await expect(openSecret(tampered, ORG), `position ${index}`).rejects.toThrow();
    }
  });

  it.each(['', 'v1', 'v2.a.b.c', 'v1.a.b', 'v1.a.b.c.d', 'v1.!!.b.c'])(
    'throws on the malformed %j',
    async (sealed) => {
      await expect(openSecret(sealed, ORG)).rejects.toThrow();
    },
  );

  it('refuses to seal inside Lambda without KMS or a usable WEBHOOK_SECRETS_KEY, and uses the key when given', async () => {
    try {
      // Prepare
      vi.resetModules();
      vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'webhook-worker');
      vi.stubEnv('WEBHOOK_SECRETS_KEY', '');

      // Act + Assess
      const unkeyed = await import('../../shared/webhooks/secret-box');
      await expect(unkeyed.sealSecret('whsec_z', ORG)).rejects.toThrow(/WEBHOOK_SECRETS_KMS_KEY_ID/);

      for (const tooWeak of [Buffer.alloc(16).toString('base64'), 'changeme', 'x'.repeat(47)]) {
        vi.resetModules();
        vi.stubEnv('WEBHOOK_SECRETS_KEY', tooWeak);
        const weak = await import('../../shared/webhooks/secret-box');
        await expect(weak.sealSecret('whsec_z', ORG)).rejects.toThrow(/32 bytes/);
      }

      // The 64-character password the CDK stack generates is hashed into a key.
      vi.resetModules();
      vi.stubEnv('WEBHOOK_SECRETS_KEY', 'Ab3'.repeat(21).padEnd(64, 'z'));
      const derived = await import('../../shared/webhooks/secret-box');
      expect(await derived.openSecret(await derived.sealSecret('whsec_y', ORG), ORG)).toBe('whsec_y');

      vi.resetModules();
      vi.stubEnv('WEBHOOK_SECRETS_KEY', Buffer.alloc(32, 9).toString('base64'));
      const box = await import('../../shared/webhooks/secret-box');
      const sealed = await box.sealSecret('whsec_x', ORG);
      expect(await box.openSecret(sealed, ORG)).toBe('whsec_x');
      // Sealed under a different key: the development key cannot open it.
      await expect(openSecret(sealed, ORG)).rejects.toThrow();
    } finally {
      vi.unstubAllEnvs();
      vi.resetModules();
    }
  });
});
