import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Webhook signing secrets must be readable again (we sign with them), so they cannot be hashed like
 * API keys; they are sealed with AES-256-GCM instead and a table dump alone reveals none of them.
 * The key is read once at cold start. The next step is KMS envelope encryption: decrypt a data key
 * at cold start and keep this synchronous seal/open pair; the `v1.` prefix lets a `v2.` format (with
 * the wrapped data key) sit beside existing rows during the migration.
 */
const VERSION = 'v1';
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
      throw new Error('Missing required environment variable WEBHOOK_SECRETS_KEY');
    return DEVELOPMENT_KEY;
  }
  const decoded = BASE64.test(raw) ? Buffer.from(raw, 'base64') : undefined;
  if (decoded?.length === KEY_BYTES) return decoded;
  if (raw.length >= MIN_DERIVED_KEY_CHARS) return createHash('sha256').update(raw, 'utf8').digest();
  throw new Error(
    `WEBHOOK_SECRETS_KEY must be base64 of ${KEY_BYTES} bytes or a random string of at least ${MIN_DERIVED_KEY_CHARS} characters`,
  );
}

const key = loadKey();

export function sealSecret(plaintext: string): string {
  // A fresh random IV per seal: GCM loses both confidentiality and integrity if an IV ever repeats.
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
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

/** Throws on anything malformed, sealed under another key, or altered in any byte (GCM tag check). */
export function openSecret(sealed: string): string {
  const parts = sealed.split('.');
  if (parts.length !== 4 || parts[0] !== VERSION) throw new Error('Malformed sealed secret');
  const iv = decodePart(parts[1]);
  const ciphertext = decodePart(parts[2]);
  const tag = decodePart(parts[3]);
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new Error('Malformed sealed secret');
  const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
}
