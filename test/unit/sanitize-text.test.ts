import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sanitizeText } from '../../shared/sanitize/text';

/** Strings built from the pieces an attacker would combine to smuggle a tag through. */
const tagSoup = fc
  .array(
    fc.constantFrom(
      '<',
      '>',
      '</',
      '/>',
      'script',
      'SCRIPT',
      'style',
      'iframe',
      'object',
      'b',
      'img',
      ' ',
      'on',
      'onerror',
      'onload',
      '=',
      '"',
      "'",
      'javascript:',
      'data:',
      'alert(1)',
      '!--',
      '-->',
      '\n',
      '\u0000',
      'a',
      'x',
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(''));

describe('sanitizeText', () => {
  it.each([
    ['<script>alert(1)</script>Hello', 'Hello'],
    ['Hi<SCRIPT type="text/javascript">steal()</SCRIPT > there', 'Hi there'],
    ['<style>body{display:none}</style>Visible', 'Visible'],
    ['<iframe src="https://evil.example"></iframe>Text', 'Text'],
    ['<object data="x.swf"><param name="a"></object>Text', 'Text'],
  ])('removes dangerous elements with their content: %j', (input, expected) => {
    // Act / Assess
    expect(sanitizeText(input)).toBe(expected);
  });

  it('removes every tag and keeps the text between them', () => {
    // Act
    const result = sanitizeText('<p>Hello <b>dear</b> <i>customer</i></p><br/>Thanks<!-- note -->');

    // Assess
    expect(result).toBe('Hello dear customerThanks');
  });

  it('removes event handler attributes together with their tag', () => {
    // Act / Assess
    expect(sanitizeText('<img src=x onerror=alert(1)>ok')).toBe('ok');
    expect(sanitizeText('<svg/onload=alert(1)>ok')).toBe('ok');
    expect(sanitizeText('<div onclick="steal()" class="a">ok</div>')).toBe('ok');
  });

  it('removes javascript: and data: URLs that sit inside tags', () => {
    // Act
    const result = sanitizeText(
      '<a href="javascript:alert(1)">click</a> <a href="data:text/html;base64,PHNjcmlwdD4=">here</a>',
    );

    // Assess
    expect(result).toBe('click here');
    expect(result).not.toMatch(/javascript:|data:/i);
  });

  it('keeps plain text, including angle brackets that open no tag', () => {
    // Act / Assess
    expect(sanitizeText('Order #42 costs < 5 € & ships in 2 > 1 days')).toBe(
      'Order #42 costs < 5 € & ships in 2 > 1 days',
    );
    expect(sanitizeText('  padded  ')).toBe('padded');
    expect(sanitizeText('Grüße, 你好, 👋')).toBe('Grüße, 你好, 👋');
  });

  it('defeats the nested-tag trick', () => {
    // Act
    const result = sanitizeText('<scr<b>ipt>alert(1)</script>');

    // Assess
    expect(result).not.toMatch(/<script/i);
    expect(result).not.toContain('<');
    expect(sanitizeText('<<script>script>alert(1)<</script>/script>')).not.toMatch(/<\/?script/i);
  });

  it('leaves no tag opening behind from an unclosed tag, and no attribute text after a quoted `>`', () => {
    expect(sanitizeText('<scr<b>ipt')).not.toMatch(/<\s*script/i);
    expect(sanitizeText('<img src="x>" onerror="alert(1)">hi')).toBe('hi');
    expect(sanitizeText('<script>a</script foo>b')).toBe('b');
    expect(sanitizeText('a < b and c > d')).toBe('a < b and c > d');
  });

  it('drops NUL characters that could split a tag name', () => {
    // Act / Assess
    expect(sanitizeText('<scr\u0000ipt>alert(1)</script>after')).toBe('after');
  });

  it('is stable on pathological nesting', () => {
    // Prepare
    const deep = `${'<scr'.repeat(30)}<b>${'ipt>'.repeat(30)}alert(1)`;

    // Act
    const once = sanitizeText(deep);

    // Assess
    expect(once).not.toMatch(/<[a-z/!?]/i);
    expect(sanitizeText(once)).toBe(once);
  });

  it('is idempotent on arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), (input) => {
        const once = sanitizeText(input);
        expect(sanitizeText(once)).toBe(once);
      }),
      { numRuns: 500 },
    );
  });

  it('is idempotent on strings built from tag fragments, and leaves no tag behind', () => {
    fc.assert(
      fc.property(tagSoup, (input) => {
        const once = sanitizeText(input);
        expect(sanitizeText(once)).toBe(once);
        // No complete tag survives: nothing a browser would read as `<name ...>`.
        expect(once).not.toMatch(/<\/?[a-z!?][^<>]*>/i);
        expect(once).not.toContain('\u0000');
      }),
      { numRuns: 2000 },
    );
  });
});
