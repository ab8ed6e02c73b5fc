import { randomBytes } from 'node:crypto';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for any RFC 9562 UUID string (ids from clients may be any version). */
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

let lastMs = -1;
let sequence = 0;

/**
 * UUIDv7: 48-bit Unix milliseconds, a 12-bit sequence, then randomness. Time-ordered, so ids sort
 * by creation and serve directly as sort keys (messages, events, deliveries). Within one process
 * they are strictly increasing inside one millisecond too (RFC 9562 §6.2, method 1): the sequence
 * starts at a random value in its lower half each millisecond and counts up. An explicit earlier
 * time is encoded as given (ids always tell their time).
 */
export function uuidv7(nowMs: number = Date.now()): string {
  const bytes = randomBytes(16);
  let ms = Math.floor(nowMs);
  if (ms === lastMs && sequence < 0xfff) {
    sequence += 1;
  } else {
    // A new millisecond (or, past 2048 ids in one, the next one): start the sequence afresh.
    if (ms === lastMs) ms += 1;
    sequence = (((bytes[6] ?? 0) << 8) | (bytes[7] ?? 0)) & 0x7ff;
  }
  lastMs = ms;
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The Unix milliseconds a UUIDv7 tells (when it was minted); undefined for any other string. */
export function uuidv7Ms(id: string): number | undefined {
  if (!isUuid(id) || id[14] !== '7') return undefined;
  return Number.parseInt(`${id.slice(0, 8)}${id.slice(9, 13)}`, 16);
}

/** 16 raw bytes of a UUID, for packing ids into tokens. */
export function uuidToBytes(id: string): Buffer {
  return Buffer.from(id.replaceAll('-', ''), 'hex');
}

export function bytesToUuid(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
