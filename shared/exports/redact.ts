import type { CountryCode } from 'libphonenumber-js/max';

/**
 * `redact_pii=true`: e-mail addresses and phone numbers in message text are masked, everything else
 * is kept as written. Phone numbers are found by libphonenumber (full metadata, `VALID` leniency):
 * international forms (`+44 20 7946 0958`) anywhere, national forms (`020 7946 0958`,
 * `(202) 555-0143`, `2025550143`) for the countries of the organization's locales. A bare pattern
 * would also take order numbers, dates, prices and ids; validating against each country's
 * numbering plan is what keeps those.
 */
export const EMAIL_MASK = '[email redacted]';
export const PHONE_MASK = '[phone redacted]';

type PhoneLibrary = typeof import('./phone-numbers');
let phoneLibrary: Promise<PhoneLibrary> | undefined;

/**
 * Loaded by the first export that redacts, not at module load: its numbering-plan metadata is half
 * of the exports function's bundle and most exports do not redact (docs/decisions.md, "node:http
 * and ICU at import; phone metadata on first redaction").
 */
const loadPhoneLibrary = () => (phoneLibrary ??= import('./phone-numbers'));

/** `redact_pii=true`: the masking function for an organization with these locales. */
export async function piiRedactor(locales: readonly string[]): Promise<(text: string) => string> {
  const phones = await loadPhoneLibrary();
  const regions = phoneRegions(phones, locales);
  return (text) => redactPii(phones, text, regions);
}

/**
 * Local part and domain as mail actually uses them (RFC 5322 dot-atoms, no quoted forms); the
 * domain needs a dot and a letter-only top-level label, so `user@localhost` and `a@b.1` stay.
 */
const EMAIL =
  /(?<![\w.%+-])[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}(?![\w-])/g;

/** What a phone number may be written with; a match holding anything else (a comma) is not one. */
const PHONE_TEXT = /^[+\d\s().\-/]+$/;
/** Dates (`21.11.2026`, `2026-11-21`, `11/21/26`) fit some numbering plans; they are never numbers to mask. */
const DATE = /^\d{1,4}([./-])\d{1,2}\1\d{1,4}$/;
/** Part of a longer token (an id, a reference): digits or letters touching the match. */
const WORD_CHAR = /[\p{L}\p{N}_-]/u;

/** Countries whose national phone forms are looked for: the regions of the organization's locales. */
function phoneRegions(phones: PhoneLibrary, locales: readonly string[]): CountryCode[] {
  const regions = new Set<CountryCode>();
  for (const tag of locales) {
    let region: string | undefined;
    try {
      region = new Intl.Locale(tag).maximize().region;
    } catch {
      region = undefined;
    }
    if (region && phones.isSupportedCountry(region)) regions.add(region);
  }
  if (regions.size === 0) regions.add('US');
  return [...regions];
}

interface Span {
  start: number;
  end: number;
}

/**
 * Stretches of text a phone number cannot span: libphonenumber's matcher would otherwise take
 * `(202) 555-0143, 202` as one candidate, refuse it, and miss the numbers after it in a list.
 */
const SEGMENT = /[^,;\n]+/g;

function phoneSpans(phones: PhoneLibrary, text: string, regions: readonly CountryCode[]): Span[] {
  const spans: Span[] = [];
  for (const segment of text.matchAll(SEGMENT)) {
    if (!/\d{2}/.test(segment[0])) continue;
    spans.push(...segmentSpans(phones, text, segment.index, segment[0], regions));
  }
  return spans;
}

function segmentSpans(
  phones: PhoneLibrary,
  text: string,
  offset: number,
  segment: string,
  regions: readonly CountryCode[],
): Span[] {
  const spans: Span[] = [];
  // International numbers are found whatever the default country; one pass per region adds its
  // national forms. A span found twice is masked once.
  for (const defaultCountry of regions) {
    for (const found of phones.findNumbers(segment, { defaultCountry, v2: true })) {
      const start = offset + found.startsAt;
      const end = offset + found.endsAt;
      const raw = text.slice(start, end);
      if (!PHONE_TEXT.test(raw) || DATE.test(raw.trim())) continue;
      // A national form is written as the country writes it, trunk prefix included (`0…` in France,
      // Britain, Germany): `123456789` is an order number in France, not `01 23 45 67 89`.
      const digits = raw.replace(/\D/g, '');
      const international = raw.trimStart().startsWith('+') || digits.startsWith('00');
      if (!international && !digits.endsWith(found.number.formatNational().replace(/\D/g, ''))) continue;
      const before = text[start - 1];
      const after = text[end];
      if ((before && WORD_CHAR.test(before)) || (after && WORD_CHAR.test(after))) continue;
      spans.push({ start, end });
    }
  }
  return spans;
}

/** The text with every e-mail address and phone number replaced by its mask. */
function redactPii(phones: PhoneLibrary, text: string, regions: readonly CountryCode[]): string {
  if (text === '') return text;
  const withoutEmails = text.includes('@') ? text.replace(EMAIL, EMAIL_MASK) : text;
  // Fewer than 6 digits cannot be a phone number anywhere: most messages stop here.
  let digits = 0;
  for (let i = 0; i < withoutEmails.length && digits < 6; i++) {
    const code = withoutEmails.charCodeAt(i);
    if (code >= 48 && code <= 57) digits++;
  }
  if (digits < 6) return withoutEmails;
  const spans = phoneSpans(phones, withoutEmails, regions).sort((a, b) => a.start - b.start || b.end - a.end);
  if (spans.length === 0) return withoutEmails;
  let out = '';
  let at = 0;
  for (const span of spans) {
    if (span.start < at) continue;
    out += withoutEmails.slice(at, span.start) + PHONE_MASK;
    at = span.end;
  }
  return out + withoutEmails.slice(at);
}
