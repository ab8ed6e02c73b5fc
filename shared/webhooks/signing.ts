import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): receivers verify with any Standard
 * Webhooks library. During a rotation two secrets are active and the header carries one signature
 * per secret, so a receiver holding either one accepts the delivery.
 */
const PREFIX = 'whsec_';
const SECRET_BYTES = 32;
/** Standard Webhooks asks for at least 24 bytes; externally supplied secrets may be shorter than ours. */
const MIN_SECRET_BYTES = 24;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export interface SignedMessage {
  /** The event id: stable across retries, so receivers can deduplicate. */
  id: string;
  /** Unix seconds. */
  timestamp: number;
  /** The exact bytes sent; any re-serialization breaks the signature. */
  body: string;
}

/** A type alias (not an interface) so it stays assignable to `Record<string, string>` header bags. */
export type WebhookHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
  'content-type': 'application/json';
};

export function generateSecret(): string {
  return `${PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

function decodeKey(secret: string): Buffer | undefined {
  if (!secret.startsWith(PREFIX)) return undefined;
  const encoded = secret.slice(PREFIX.length);
  if (!BASE64.test(encoded)) return undefined;
  const key = Buffer.from(encoded, 'base64');
  // Buffer.from silently skips what it cannot read: re-encoding proves every character counted.
  if (key.toString('base64').replace(/=+$/, '') !== encoded.replace(/=+$/, '')) return undefined;
  return key.length >= MIN_SECRET_BYTES ? key : undefined;
}

export function isValidSecret(secret: string): boolean {
  return decodeKey(secret) !== undefined;
}

/**
 * Decoded keys by secret. A warm worker signs for the same few webhooks again and again; decoding and
 * validating each time would cost about as much as the HMAC itself. Bounded so a long-lived process
 * cannot grow it without limit (cleared wholesale: cheaper than LRU bookkeeping, refilled on demand).
 */
const MAX_CACHED_KEYS = 1024;
const keys = new Map<string, Buffer>();

function keyFor(secret: string): Buffer {
  const cached = keys.get(secret);
  if (cached) return cached;
  const key = decodeKey(secret);
  if (!key)
    throw new Error('Invalid webhook secret: expected whsec_ followed by base64 of at least 24 bytes');
  if (keys.size >= MAX_CACHED_KEYS) keys.clear();
  keys.set(secret, key);
  return key;
}

/** `v1,<base64 HMAC-SHA256>` per active secret over `{id}.{timestamp}.{body}`, space-separated. */
export function signatureHeader(message: SignedMessage, secrets: readonly string[]): string {
  if (secrets.length === 0) throw new Error('A webhook delivery needs at least one active secret');
  if (!Number.isSafeInteger(message.timestamp) || message.timestamp < 0)
    throw new Error('Webhook timestamp must be whole Unix seconds');
  const content = `${message.id}.${message.timestamp}.${message.body}`;
  let header = '';
  for (const secret of secrets) {
    const signature = createHmac('sha256', keyFor(secret)).update(content).digest('base64');
    header = header ? `${header} v1,${signature}` : `v1,${signature}`;
  }
  return header;
}

export function webhookHeaders(message: SignedMessage, secrets: readonly string[]): WebhookHeaders {
  return {
    'webhook-id': message.id,
    'webhook-timestamp': String(message.timestamp),
    'webhook-signature': signatureHeader(message, secrets),
    'content-type': 'application/json',
  };
}
