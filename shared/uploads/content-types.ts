/**
 * What an attachment may be, and whether its bytes are what it claims. An allow-list: HTML, SVG,
 * scripts and executables are never accepted, since a download link to them would serve stored
 * script from a URL the service handed out.
 */

const ZIP = 'application/zip';
const OFFICE = [
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/vnd.oasis.opendocument.text',
  'application/vnd.oasis.opendocument.spreadsheet',
  'application/vnd.oasis.opendocument.presentation',
] as const;
const TEXT = ['text/plain', 'text/csv', 'application/json'] as const;

export const allowedContentTypes = [
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'application/pdf',
  ...TEXT,
  ZIP,
  'audio/mpeg',
  'audio/ogg',
  'video/mp4',
  ...OFFICE,
] as const;

export type AllowedContentType = (typeof allowedContentTypes)[number];

/** Bytes read from the start of the object to recognize it (zip-based office files need some). */
export const SNIFF_BYTES = 64 * 1024;

/**
 * What the detector may report for each declared binary type. Office documents are zip archives:
 * when their marker entry lies beyond the bytes read they are recognized as a zip only, which
 * still tells them from a PNG or a PDF; a declared zip may be any zip-based document.
 */
const accepted: Readonly<Record<string, readonly string[]>> = {
  'image/png': ['image/png', 'image/apng'],
  'image/jpeg': ['image/jpeg'],
  'image/gif': ['image/gif'],
  'image/webp': ['image/webp'],
  'application/pdf': ['application/pdf'],
  [ZIP]: [ZIP, ...OFFICE],
  'audio/mpeg': ['audio/mpeg'],
  'audio/ogg': ['audio/ogg', 'audio/opus', 'audio/ogg; codecs=opus', 'video/ogg'],
  'video/mp4': ['video/mp4', 'audio/mp4', 'video/x-m4v', 'audio/x-m4a'],
  ...Object.fromEntries(OFFICE.map((type) => [type, [type, ZIP]])),
};

/** Markup that must not pass as text: a browser told to sniff would render it. */
const MARKUP = /^(?:\uFEFF)?\s*<(?:script|html|!doctype\s+html|svg|iframe|body|head)\b/i;
/** The first character a JSON text may start with (after whitespace and a BOM). */
const JSON_START = /^(?:\uFEFF)?\s*(?:[[{"\-0-9]|true|false|null)/;

/**
 * Whether the first bytes of a stored object are of the declared type, by their magic numbers
 * (file-type); text types must hold text (no NUL, no recognized binary format, no markup start).
 */
export async function bytesMatch(declared: string, head: Uint8Array): Promise<boolean> {
  const { fileTypeFromBuffer } = await import('file-type');
  let detected: string | undefined;
  try {
    detected = (await fileTypeFromBuffer(head))?.mime;
  } catch {
    // A truncated container the detector cannot finish reading: recognized as nothing.
    detected = undefined;
  }
  if ((TEXT as readonly string[]).includes(declared)) {
    if (detected !== undefined && detected !== 'application/json' && !detected.startsWith('text/'))
      return false;
    if (head.includes(0)) return false;
    const text = new TextDecoder('utf-8', { fatal: false }).decode(head.subarray(0, 1024));
    if (MARKUP.test(text)) return false;
    return declared !== 'application/json' || JSON_START.test(text);
  }
  return detected !== undefined && (accepted[declared] ?? []).includes(detected);
}
