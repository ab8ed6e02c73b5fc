/**
 * Message content is text. Sanitizing removes whole dangerous elements (script, style, iframe,
 * object, embed …) with their content, then every remaining tag (so no `on*` attribute or
 * `javascript:`/`data:` URL survives), and keeps the text. It repeats until nothing changes, which
 * makes it idempotent by construction: `sanitize(sanitize(x)) === sanitize(x)`, even for
 * nested tricks such as `<scr<b>ipt>`.
 */
const DANGEROUS_ELEMENT =
  /<(script|style|iframe|object|embed|noscript|template|textarea|title|xmp|noembed|noframes)\b[^>]*>[\s\S]*?<\/\1\b[^>]*>/gi;
/** A tag, with quoted attribute values that may themselves contain `>`. */
const ANY_TAG = /<\/?[a-z!?](?:[^<>"']|"[^"]*"|'[^']*')*>/gi;
/** What is left of a tag that never closed (`<scr<b>ipt` → `<script`): its opening bracket goes. */
const TAG_OPENING = /<(?=[a-z/!?])/gi;
const MAX_PASSES = 20;

function onePass(text: string): string {
  return text.replace(DANGEROUS_ELEMENT, '').replace(ANY_TAG, '').replace(TAG_OPENING, '');
}

export function sanitizeText(input: string): string {
  let current = input.replaceAll('\u0000', '');
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const next = onePass(current);
    if (next === current) return current.trim();
    current = next;
  }
  // Pathological nesting: drop every angle bracket rather than return something unstable.
  return current.replace(/[<>]/g, '').trim();
}

/** Lower-cased words of the content, for the search index. */
export function searchVectorOf(text: string): string {
  return text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}
