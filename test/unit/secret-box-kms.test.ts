import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const KEY_ID = 'arn:aws:kms:eu-west-1:123456789012:key/0190a3c4-7e51-7000-8000-00000000beef';
const ORG = '0190a3c4-7e51-7000-8000-0000000000aa';
const OTHER_ORG = '0190a3c4-7e51-7000-8000-0000000000bb';

/**
 * A stand-in for KMS that behaves like it where it matters here: the ciphertext is opaque (not the
 * plaintext), and Decrypt refuses an encryption context other than the one used to encrypt.
 */
const kms = mockClient(KMSClient);
const fakeCiphertext = (plaintext: Uint8Array, context: Record<string, string> | undefined) =>
  Buffer.from(JSON.stringify({ context, body: Buffer.from(plaintext).reverse().toString('hex') }));

beforeEach(() => {
  vi.resetModules();
  vi.stubEnv('WEBHOOK_SECRETS_KMS_KEY_ID', KEY_ID);
  kms.reset();
  kms
    .on(EncryptCommand)
    .callsFake((input: { Plaintext: Uint8Array; EncryptionContext?: Record<string, string> }) => ({
      CiphertextBlob: fakeCiphertext(input.Plaintext, input.EncryptionContext),
    }));
  kms
    .on(DecryptCommand)
    .callsFake((input: { CiphertextBlob: Uint8Array; EncryptionContext?: Record<string, string> }) => {
      const sealed = JSON.parse(Buffer.from(input.CiphertextBlob).toString()) as {
        context: Record<string, string>;
        body: string;
      };
      if (JSON.stringify(sealed.context) !== JSON.stringify(input.EncryptionContext)) {
        throw Object.assign(new Error('InvalidCiphertextException'), { name: 'InvalidCiphertextException' });
      }
      return { Plaintext: Buffer.from(sealed.body, 'hex').reverse() };
    });
});

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('secret box under KMS', () => {
  it('seals with the configured key and the organization as encryption context', async () => {
    const box = await import('../../shared/webhooks/secret-box');

    const sealed = await box.sealSecret('whsec_kms', ORG);

    expect(sealed).toMatch(/^v2\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('whsec_kms');
    const [call] = kms.commandCalls(EncryptCommand);
    expect(call?.args[0].input).toMatchObject({ KeyId: KEY_ID, EncryptionContext: { organizationId: ORG } });
    expect(await box.openSecret(sealed, ORG)).toBe('whsec_kms');
    // Decrypt names the key it expects: a value sealed under another key is refused.
    const [decrypt] = kms.commandCalls(DecryptCommand);
    expect(decrypt?.args[0].input).toMatchObject({
      KeyId: KEY_ID,
      EncryptionContext: { organizationId: ORG },
    });
  });

  it('asks KMS once per sealed value, however many deliveries open it', async () => {
    const box = await import('../../shared/webhooks/secret-box');
    const sealed = await box.sealSecret('whsec_cached', ORG);

    const opened = await Promise.all(Array.from({ length: 20 }, () => box.openSecret(sealed, ORG)));

    expect(new Set(opened)).toEqual(new Set(['whsec_cached']));
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(1);
  });

  it('refuses a secret sealed for another organization (a row copied across tenants)', async () => {
    const box = await import('../../shared/webhooks/secret-box');
    const sealed = await box.sealSecret('whsec_theirs', OTHER_ORG);

    await expect(box.openSecret(sealed, ORG)).rejects.toThrow(/InvalidCiphertext/);
    // The refusal is not cached: the right organization still opens it.
    expect(await box.openSecret(sealed, OTHER_ORG)).toBe('whsec_theirs');
  });

  it('asks again after a KMS failure instead of remembering it', async () => {
    const box = await import('../../shared/webhooks/secret-box');
    const sealed = await box.sealSecret('whsec_retry', ORG);
    kms
      .on(DecryptCommand)
      .rejectsOnce(Object.assign(new Error('throttled'), { name: 'ThrottlingException' }));

    await expect(box.openSecret(sealed, ORG)).rejects.toThrow(/throttled/);

    kms.on(DecryptCommand).resolves({ Plaintext: Buffer.from('whsec_retry') });
    expect(await box.openSecret(sealed, ORG)).toBe('whsec_retry');
  });

  it('still opens secrets sealed locally before KMS was configured', async () => {
    vi.stubEnv('WEBHOOK_SECRETS_KMS_KEY_ID', '');
    const local = await import('../../shared/webhooks/secret-box');
    const sealedLocally = await local.sealSecret('whsec_old', ORG);
    vi.stubEnv('WEBHOOK_SECRETS_KMS_KEY_ID', KEY_ID);

    expect(sealedLocally.startsWith('v1.')).toBe(true);
    expect(await local.openSecret(sealedLocally, ORG)).toBe('whsec_old');
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(0);
  });
});
