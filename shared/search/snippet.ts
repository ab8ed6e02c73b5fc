/**
 * Snippets: at most `SNIPPET_LENGTH` characters of a text around its first match (counted before
 * escaping and marking), HTML-escaped, each matched word wrapped in `<mark>`…`</mark>`. Which words
 * match is decided by the index's own analysis (stemming, accents: `lexemesOf`), not by a guess.
 */
export const SNIPPET_LENGTH = 300;

/** Words as PostgreSQL's parser splits them, near enough for highlighting: letters and digits. */
const WORD = /[\p{L}\p{N}]+/gu;

export function wordsOf(text: string): { word: string; start: number; end: number }[] {
  return [...text.matchAll(WORD)].map((match) => ({
    word: match[0],
    start: match.index,
    end: match.index + match[0].length,
  }));
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);

/** The query's terms as the index stores them: exact lexemes, and prefixes. */
export interface QueryTerms {
  lexemes: ReadonlySet<string>;
  prefixes: readonly string[];
}

/** Reads the lexemes of a tsquery's text form (`'refund' & 'invoic':*`). */
export function termsOfTsquery(texts: readonly string[]): QueryTerms {
  const lexemes = new Set<string>();
  const prefixes: string[] = [];
  for (const text of texts)
    for (const match of text.matchAll(/'((?:[^']|'')*)'(:\*)?/g)) {
      const lexeme = (match[1] ?? '').replaceAll("''", "'");
      if (match[2]) prefixes.push(lexeme);
      else lexemes.add(lexeme);
    }
  return { lexemes, prefixes };
}

export function isMatch(wordLexemes: readonly string[], terms: QueryTerms): boolean {
  return wordLexemes.some(
    (lexeme) => terms.lexemes.has(lexeme) || terms.prefixes.some((prefix) => lexeme.startsWith(prefix)),
  );
}

/**
 * The snippet of `text`: `matched` tells, per word (lower-cased), whether it matches the query.
 * The window starts a little before the first match, at a word boundary, and never cuts a word in
 * two at its end when it can help it.
 */
export function snippetOf(text: string, matched: (word: string) => boolean): string {
  const words = wordsOf(text);
  const hits = words.filter((word) => matched(word.word.toLowerCase()));
  let start = 0;
  const first = hits[0];
  if (first && text.length > SNIPPET_LENGTH) {
    // Some context before the match, as long as the match itself fits.
    const lead = Math.min(60, Math.max(0, SNIPPET_LENGTH - (first.end - first.start)));
    start = Math.max(0, first.start - lead);
    const before = words.find((word) => word.end > start);
    if (before && before.start < start && before.end <= first.start) start = before.end;
    start = Math.min(start, Math.max(0, text.length - SNIPPET_LENGTH));
    while (start < first.start && /\s/u.test(text[start] ?? '')) start++;
  }
  let end = Math.min(text.length, start + SNIPPET_LENGTH);
  const cut = words.find((word) => word.start < end && word.end > end);
  if (cut && cut.start > start) end = cut.start;
  let out = '';
  let at = start;
  for (const hit of hits) {
    if (hit.start < start || hit.end > end) continue;
    out += `${escapeHtml(text.slice(at, hit.start))}<mark>${escapeHtml(text.slice(hit.start, hit.end))}</mark>`;
    at = hit.end;
  }
  out += escapeHtml(text.slice(at, end));
  return out.trimEnd();
}
