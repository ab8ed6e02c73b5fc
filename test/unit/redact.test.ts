import { describe, expect, it } from 'vitest';
import { EMAIL_MASK, PHONE_MASK, phoneRegions, redactPii } from '../../shared/exports/redact';

/** redact_pii: a corpus of what must be masked and of what must survive, per region set. */
const regions = phoneRegions(['en-US', 'en-GB', 'fr-FR', 'de']);

describe('phoneRegions', () => {
  it('takes the regions of the organization locales, likely ones for bare languages, US otherwise', () => {
    expect(phoneRegions(['en-GB', 'fr'])).toEqual(['GB', 'FR']);
    expect(phoneRegions(['de', 'de-AT'])).toEqual(['DE', 'AT']);
    expect(phoneRegions([])).toEqual(['US']);
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
    expect(redactPii(`before ${pii} after`, regions)).toBe(`before ${mask} after`);
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
    expect(redactPii(text, regions)).toBe(text);
  });

  it('masks every number of a list and keeps the text around them', () => {
    expect(
      redactPii('Call +44 20 7946 0958, (202) 555-0143, 202.555.0143; or mail a@example.com.', regions),
    ).toBe(`Call ${PHONE_MASK}, ${PHONE_MASK}, ${PHONE_MASK}; or mail ${EMAIL_MASK}.`);
  });

  it('finds national forms only of the given regions', () => {
    expect(redactPii('06 12 34 56 78', ['US'])).toBe('06 12 34 56 78');
    expect(redactPii('06 12 34 56 78', ['FR'])).toBe(PHONE_MASK);
    // International forms whatever the regions.
    expect(redactPii('+33 6 12 34 56 78', ['US'])).toBe(PHONE_MASK);
  });
});
