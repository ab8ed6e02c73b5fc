import { describe, expect, it } from 'vitest';
import { EMAIL_MASK, PHONE_MASK, piiRedactor } from '../../shared/exports/redact';

/** redact_pii: a corpus of what must be masked and of what must survive, per region set. */
const redactPii = await piiRedactor(['en-US', 'en-GB', 'fr-FR', 'de']);

describe('the regions of national forms', () => {
  it('are those of the organization locales, likely ones for bare languages, US otherwise', async () => {
    const british = '020 7946 0958';
    const austrian = '0664 1234567';
    const american = '(202) 555-0143';
    const forLocales = async (locales: string[]) => {
      const redact = await piiRedactor(locales);
      return [british, austrian, american].map((number) => redact(number) === PHONE_MASK);
    };
    expect(await forLocales(['en-GB', 'fr'])).toEqual([true, false, false]);
    expect(await forLocales(['de', 'de-AT'])).toEqual([false, true, false]);
    expect(await forLocales([])).toEqual([false, false, true]);
  });
});

describe('redactPii', () => {
  it.each([
    ['jane.doe+orders@example.co.uk', EMAIL_MASK],
    ['JOHN@MAIL.EXAMPLE.COM', EMAIL_MASK],
    ['first_last@sub-domain.example.org', EMAIL_MASK],
    ['+44 20 7946 0958', PHONE_MASK],
    ['020 7946 0958', PHONE_MASK],
    ['+1-202-555-0143', PHONE_MASK],
    ['(202) 555-0143', PHONE_MASK],
    ['202.555.0143', PHONE_MASK],
    ['2025550143', PHONE_MASK],
    ['+33 6 12 34 56 78', PHONE_MASK],
    ['+33612345678', PHONE_MASK],
    ['06 12 34 56 78', PHONE_MASK],
    ['030 12345678', PHONE_MASK],
    ['+49 30 12345678', PHONE_MASK],
    ['0049 30 12345678', PHONE_MASK],
  ])('masks %s', (pii, mask) => {
    expect(redactPii(`before ${pii} after`)).toBe(`before ${mask} after`);
  });

  it.each([
    'Order 123456789 ships Monday',
    'Order #A-100234 shipped on 21.11.2026',
    'due 2026-11-21 or 11/21/2026',
    'total $1,234.56 or EUR 1.234,56',
    'id 0192f3a4-5b6c-7d8e-9f00-112233445566',
    'card ref 4000123412341234',
    'tracking 1Z999AA10123456784, invoice INV-2026-000123',
    'version 1.2.3, from 10:30 to 11:45',
    'ISBN 978-3-16-148410-0, zip 90210, 1,000,000 users in 2026',
    'user@localhost and a@b.1 are not addresses',
    'no digits at all, just words',
  ])('keeps %s', (text) => {
    expect(redactPii(text)).toBe(text);
  });

  it('masks every number of a list and keeps the text around them', () => {
    expect(redactPii('Call +44 20 7946 0958, (202) 555-0143, 202.555.0143; or mail a@example.com.')).toBe(
      `Call ${PHONE_MASK}, ${PHONE_MASK}, ${PHONE_MASK}; or mail ${EMAIL_MASK}.`,
    );
  });

  it('finds national forms only of the given regions', async () => {
    const american = await piiRedactor(['en-US']);
    expect(american('06 12 34 56 78')).toBe('06 12 34 56 78');
    expect((await piiRedactor(['fr-FR']))('06 12 34 56 78')).toBe(PHONE_MASK);
    // International forms whatever the regions.
    expect(american('+33 6 12 34 56 78')).toBe(PHONE_MASK);
  });
});
