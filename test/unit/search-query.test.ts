import { describe, expect, it } from 'vitest';
import { parseQuery, positiveTextLeaves, type QueryNode } from '../../shared/search/query';
import { escapeHtml, isMatch, snippetOf, termsOfTsquery } from '../../shared/search/snippet';

/** The tree as a compact string: what the parser understood. */
function show(node: QueryNode): string {
  switch (node.type) {
    case 'and':
      return `(${node.items.map(show).join(' & ')})`;
    case 'or':
      return `(${node.items.map(show).join(' | ')})`;
    case 'not':
      return `!${show(node.item)}`;
    case 'word':
      return node.text;
    case 'prefix':
      return `${node.text}*`;
    case 'phrase':
      return `"${node.text}"`;
    case 'filter':
      return `${node.name === 'cf' ? `cf.${node.field}` : node.name}${node.op}${node.value}`;
  }
}

const offsetOf = (q: string): number | undefined => {
  try {
    parseQuery(q);
  } catch (error) {
    return (error as { details?: { offset?: number } }).details?.offset;
  }
  return undefined;
};

describe('the search query parser', () => {
  it.each([
    ['refund', 'refund'],
    ['refund invoice', '(refund & invoice)'],
    ['refund AND invoice', '(refund & invoice)'],
    ['a b OR c', '((a & b) | c)'],
    ['a OR b c', '(a | (b & c))'],
    ['a OR b OR c', '(a | b | c)'],
    ['-refund', '!refund'],
    ['NOT refund', '!refund'],
    ['-(a OR b) c', '(!(a | b) & c)'],
    ['"full refund" policy', '("full refund" & policy)'],
    ['-"full refund"', '!"full refund"'],
    ['refu*', 'refu*'],
    ['status:OPEN -status:closed', '(status:open & !status:closed)'],
    ['tag:"vip customer"', 'tag:vip customer'],
    ['operator:none team:none', '(operator:none & team:none)'],
    ['cf.plan:gold', 'cf.plan:gold'],
    ['created>2026-11-01', 'created>2026-11-01T00:00:00.000Z'],
    ['updated<2026-11-01T10:00:00+02:00', 'updated<2026-11-01T08:00:00.000Z'],
    ['((((a))))', 'a'],
    ['well-known or', '(well-known & or)'],
    ['in:notes from:visitor x', '(in:notes & from:visitor & x)'],
  ])('%s → %s', (q, tree) => {
    expect(show(parseQuery(q))).toBe(tree);
  });

  it.each([
    ['', 0],
    ['   ', 0],
    ['x'.repeat(1001), 0],
    ['OR a', 0],
    ['a OR', 2],
    ['a OR OR b', 2],
    ['a AND', 2],
    ['NOT', 0],
    ['a -', 2],
    ['()', 0],
    ['(a', 0],
    ['a)', 1],
    ['a (b (c (d (e (f)))))', 14],
    ['r*', 0],
    ['*', 0],
    ['re*fund', 2],
    ['"open', 0],
    ['""', 0],
    ['colour:red', 0],
    ['x status:done', 9],
    ['priority:meh', 9],
    ['operator:123', 9],
    ['visitor:none', 8],
    ['created:2026-11-01', 0],
    ['status>open', 0],
    ['created>2026-13-45', 8],
    ['tag:', 4],
    ['cf.:x', 0],
    [Array.from({ length: 51 }, (_, i) => `w${i}`).join(' '), 190],
  ])('%j is refused at offset %i', (q, offset) => {
    expect(offsetOf(q)).toBe(offset);
  });

  it('names what is wrong and where in the message, with the field q', () => {
    try {
      parseQuery('refund colour:red');
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({
        code: 'VALIDATION_ERROR',
        message: 'Invalid query: unknown filter "colour" at offset 7',
        details: { field: 'q', offset: 7 },
      });
    }
  });

  it('takes 50 clauses, and counts a phrase and a filter as one each', () => {
    expect(() =>
      parseQuery(Array.from({ length: 48 }, (_, i) => `w${i}`).join(' ') + ' "a b c" tag:x'),
    ).not.toThrow();
  });

  it('highlights and ranks only the terms not negated', () => {
    expect(positiveTextLeaves(parseQuery('a -b NOT (c OR -d) "e f"')).map((leaf) => leaf.text)).toEqual([
      'a',
      'd',
      'e f',
    ]);
  });
});

describe('snippets', () => {
  const terms = termsOfTsquery(["'refund' & 'polici':*"]);
  const stem = (word: string) =>
    word.startsWith('refund') ? ['refund'] : word.startsWith('polic') ? ['polici'] : [word];
  const matched = (word: string) => isMatch(stem(word), terms);

  it('escapes the text and marks each matched word', () => {
    expect(snippetOf(`Tom & "Jerry" <b>refunded</b> it's policy`, matched)).toBe(
      'Tom &amp; &quot;Jerry&quot; &lt;b&gt;<mark>refunded</mark>&lt;/b&gt; it&#39;s <mark>policy</mark>',
    );
  });

  it('keeps at most 300 characters of the text around the first match', () => {
    const text = `${'lorem ipsum '.repeat(60)}the refund arrived ${'dolor sit '.repeat(60)}`;
    const snippet = snippetOf(text, matched);
    expect(snippet).toContain('<mark>refund</mark>');
    expect(snippet.replaceAll(/<\/?mark>/g, '').length).toBeLessThanOrEqual(300);
  });

  it('escapes every character HTML gives a meaning to', () => {
    expect(escapeHtml(`<&>"'`)).toBe('&lt;&amp;&gt;&quot;&#39;');
  });
});
