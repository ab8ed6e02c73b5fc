import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { traced } from '../tracing';

/**
 * Webhook signing secrets must be readable again (we sign with them), so they cannot be hashed like
 * API keys; they are encrypted instead, and a table dump alone reveals none of them. Two formats:
 *
 * - `v2.<KMS ciphertext>` in AWS (WEBHOOK_SECRETS_KMS_KEY_ID set): AWS KMS encrypts the secret under
 *   the stack's key with the organization as encryption context, so a sealed secret copied into
 *   another organization's row does not open. Only the delivery worker may decrypt; each container
 *   asks KMS once per sealed value and keeps the answer in memory.
 * - `v1.<iv>.<ciphertext>.<tag>` locally: AES-256-GCM under WEBHOOK_SECRETS_KEY (or a published
 *   development key outside Lambda). Opening understands both, so rows sealed either way coexist.
 */
const VERSION = 'v1';
const KMS_VERSION = 'v2';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]*$/;
const BASE64 = /^[A-Za-z0-9+/]{43}=$/;
const MIN_DERIVED_KEY_CHARS = 48;

/**
 * Development only: a published constant, so anything sealed with it is effectively in clear. Used
 * when WEBHOOK_SECRETS_KEY is unset outside Lambda (local stack, unit tests); a deployed function
 * without the variable fails at load instead, like shared/config.ts.
 */
const DEVELOPMENT_KEY = Buffer.from('local-development-webhook-key-32', 'utf8');

/**
 * Either base64 of exactly 32 bytes (used as is) or a long random string such as the 64-character
 * password the CDK stack generates in Secrets Manager, hashed to 32 bytes with SHA-256 (no stretching
 * needed: the input is machine-generated, not a human password). Anything shorter is refused so a
 * placeholder like "changeme" cannot become a key.
 */
function loadKey(): Buffer {
  const raw = process.env.WEBHOOK_SECRETS_KEY;
  if (!raw) {
    if (process.env.AWS_LAMBDA_FUNCTION_NAME)
      throw new Error(
        'Missing required environment variable WEBHOOK_SECRETS_KMS_KEY_ID (or WEBHOOK_SECRETS_KEY)',
      );
    return DEVELOPMENT_KEY;
  }
  const decoded = BASE64.test(raw) ? Buffer.from(raw, 'base64') : undefined;
  if (decoded?.length === KEY_BYTES) return decoded;
  if (raw.length >= MIN_DERIVED_KEY_CHARS) return createHash('sha256').update(raw, 'utf8').digest();
  throw new Error(
    `WEBHOOK_SECRETS_KEY must be base64 of ${KEY_BYTES} bytes or a random string of at least ${MIN_DERIVED_KEY_CHARS} characters`,
  );
}

let localKey: Buffer | undefined;
/** Loaded on first use: functions that only read webhook rows never need a key. */
const key = (): Buffer => {
  localKey ??= loadKey();
  return localKey;
};

function sealLocally(plaintext: string): string {
  // A fresh random IV per seal: GCM loses both confidentiality and integrity if an IV ever repeats.
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key(), iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [
    VERSION,
    iv.toString('base64url'),
    ciphertext.toString('base64url'),
    tag.toString('base64url'),
  ].join('.');
}

/** Strict base64url: a non-canonical spelling (e.g. changed unused trailing bits) is tampering too. */
function decodePart(part: string | undefined): Buffer {
  if (part === undefined || !BASE64URL.test(part)) throw new Error('Malformed sealed secret');
  const bytes = Buffer.from(part, 'base64url');
  if (bytes.toString('base64url') !== part) throw new Error('Malformed sealed secret');
  return bytes;
}

function openLocally(sealed: string): string {
  const parts = sealed.split('.');
  if (parts.length !== 4 || parts[0] !== VERSION) throw new Error('Malformed sealed secret');
  const iv = decodePart(parts[1]);
  const ciphertext = decodePart(parts[2]);
  const tag = decodePart(parts[3]);
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new Error('Malformed sealed secret');
  const decipher = createDecipheriv('aes-256-gcm', key(), iv, { authTagLength: TAG_BYTES });
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
}

/** KMS, loaded only where it is configured: the local stack and the API's cold start never pay for it. */
let kmsClient:
  | Promise<{ kms: import('@aws-sdk/client-kms').KMSClient; sdk: typeof import('@aws-sdk/client-kms') }>
  | undefined;
const kms = () => {
  kmsClient ??= import('@aws-sdk/client-kms').then((sdk) => ({ kms: traced(new sdk.KMSClient({})), sdk }));
  return kmsClient;
};

const contextOf = (orgId: string) => ({ organizationId: orgId });

/** Opened secrets per container: one KMS Decrypt per sealed value, however many deliveries. */
const opened = new Map<string, Promise<string>>();
const MAX_OPENED = 1_000;

/**
 * Where a value is sealed: a KMS key (its id or ARN; unset: the local key) and the encryption
 * context that must be given again to open it (KMS only; the local format has none).
 */
export interface SealingKey {
  kmsKeyId: string | undefined;
  context: Record<string, string>;
}

/** Seals under the KMS key when one is named, else under the local key. */
export async function seal(plaintext: string, key: SealingKey): Promise<string> {
  if (!key.kmsKeyId) return sealLocally(plaintext);
  const { kms: client, sdk } = await kms();
  const { CiphertextBlob } = await client.send(
    new sdk.EncryptCommand({
      KeyId: key.kmsKeyId,
      Plaintext: Buffer.from(plaintext, 'utf8'),
      EncryptionContext: key.context,
    }),
  );
  if (!CiphertextBlob) throw new Error('KMS returned no ciphertext');
  return `${KMS_VERSION}.${Buffer.from(CiphertextBlob).toString('base64url')}`;
}

/**
 * Throws on anything malformed, sealed under another key or with another encryption context, or
 * altered in any byte (GCM tag check locally, KMS's own integrity check in AWS). Decrypt names the
 * key it expects (KMS's advice, and what tells the infra tests which key a function opens with).
 */
export async function openSealed(sealed: string, key: SealingKey): Promise<string> {
  if (!sealed.startsWith(`${KMS_VERSION}.`)) return openLocally(sealed);
  const { context, kmsKeyId } = key;
  const cacheKey = `${JSON.stringify(context)}/${sealed}`;
  let found = opened.get(cacheKey);
  if (!found) {
    const parts = sealed.split('.');
    if (parts.length !== 2) throw new Error('Malformed sealed secret');
    const ciphertext = decodePart(parts[1]);
    found = kms().then(async ({ kms: client, sdk }) => {
      const { Plaintext } = await client.send(
        new sdk.DecryptCommand({
          CiphertextBlob: ciphertext,
          EncryptionContext: context,
          ...(kmsKeyId && { KeyId: kmsKeyId }),
        }),
      );
      if (!Plaintext) throw new Error('KMS returned no plaintext');
      return Buffer.from(Plaintext).toString('utf8');
    });
    // A failure is not remembered: the next attempt asks KMS again.
    found.catch(() => opened.delete(cacheKey));
    if (opened.size >= MAX_OPENED) opened.delete(opened.keys().next().value ?? '');
    opened.set(cacheKey, found);
  }
  return found;
}

/** A webhook secret's key: WEBHOOK_SECRETS_KMS_KEY_ID (unset: the local key), the organization as context. */
const webhookKey = (orgId: string): SealingKey => ({
  kmsKeyId: process.env.WEBHOOK_SECRETS_KMS_KEY_ID || undefined,
  context: contextOf(orgId),
});

/** Seals under KMS when WEBHOOK_SECRETS_KMS_KEY_ID is set, else under the local key. */
export async function sealSecret(plaintext: string, orgId: string): Promise<string> {
  return seal(plaintext, webhookKey(orgId));
}

/** Opens a webhook secret: the organization is its encryption context (see `openSealed`). */
export async function openSecret(sealed: string, orgId: string): Promise<string> {
  return openSealed(sealed, webhookKey(orgId));
}
