import { type Localizable, type Resolved, resolveTranslation } from '../locale/resolve';

/**
 * Relevance search over knowledge-base articles: pure, no I/O, so the REST search
 * (`GET /api/kb/articles?q=`) and the chatbot simulation score the same way.
 *
 * Each article is read in one locale, resolved as every localized read is (the requested locale's
 * published translation, else the default locale's, else the first published one), and scored with
 * BM25 (Okapi; k1 = 1.2, b = 0.75, Lucene's always-positive idf) over its title and content, the
 * title counting twice. Scores are normalized to 0..1 by the best a document could score for the
 * query's terms found in the corpus (each term's idf × (k1 + 1)), so a threshold means the same for
 * any query: 0 shares no term with the query, about 0.45 mentions every query term once in the
 * content, and more as terms repeat or sit in the title.
 */

export interface SearchableTranslation extends Localizable {
  title: string;
  content: string;
}

export interface Searchable<T extends SearchableTranslation = SearchableTranslation> {
  translations: readonly T[];
}

export interface ScoredArticle<A extends Searchable> {
  article: A;
  /** The relevance, 0 (exclusive) to 1. */
  score: number;
  /** The translation the article was read in, and how it was resolved. */
  resolved: Resolved<A['translations'][number]>;
}

export interface SearchLocale {
  /** The locale asked for (the query is read in its language). */
  locale: string;
  /** The organization's default locale, the first fallback. */
  defaultLocale: string;
}

const K1 = 1.2;
const B = 0.75;
const TITLE_WEIGHT = 2;
/** Terms of a query beyond this are ignored: a chat message can be long, its first words say most. */
export const MAX_QUERY_TERMS = 64;

/** Letters that Unicode decomposition leaves whole, folded as a reader would type them. */
const LIGATURES: Record<string, string> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  đ: 'd',
  ł: 'l',
  þ: 'th',
  ð: 'd',
  ı: 'i',
};
const LIGATURE = /[ßæœøđłþðı]/g;
const WORD = /[\p{L}\p{N}]+/gu;
/** Scripts written without spaces between words (or commonly searched by syllable): bigrams. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;
const UNSPACED_ONE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/**
 * Function words of the languages most help centers are written in (accents already folded).
 * Small on purpose: BM25's idf already discounts words that are everywhere; these lists keep a
 * small knowledge base, where "how" may occur in one article only, from rewarding them.
 */
const STOP_WORDS: Record<string, ReadonlySet<string>> = {
  en: new Set(
    'a an and are as at be but by can do does for from has have how i if in is it its me my no not of on or our so that the their them then there these they this to was we what when where which who why will with you your'.split(
      ' ',
    ),
  ),
  fr: new Set(
    'a au aux avec ce ces comment dans de des du elle en est et il ils je la le les leur mais me mes mon ne nous on ou par pas pour qu que qui sa se ses son sur ta te tes ton tu un une vos votre vous y'.split(
      ' ',
    ),
  ),
  es: new Set(
    'a al como con de del el en es esta este la las lo los mi mis no o para pero por que se si su sus te tu un una y yo'.split(
      ' ',
    ),
  ),
  pt: new Set(
    'a ao as com como da das de do dos e em eu minha meu na nas no nos o os para por que se seu sua um uma'.split(
      ' ',
    ),
  ),
  de: new Set(
    'aber als am an auf aus bei das dem den der des die du ein eine einen er es fur ich ihr im in ist mein meine mit nicht oder sie und von wie wir zu zum zur'.split(
      ' ',
    ),
  ),
  it: new Set(
    'a al alla che come con del della di e il in la le lo mi mio non o per si su un una'.split(' '),
  ),
  nl: new Set('de een en het hoe ik in is je met mijn niet of op te van voor wat'.split(' ')),
};

/** Languages whose plurals mostly end in -s: a final s is dropped so "passwords" finds "password". */
const PLURAL_S = new Set(['en', 'fr', 'es', 'pt', 'ca', 'nl']);

const languageOf = (locale: string | undefined) => (locale ?? '').split('-')[0]?.toLowerCase() ?? '';

/** Lower case, accents and ligatures folded: "Élève", "ELEVE" and "élève" are one word. */
export function foldText(text: string): string {
  return (
    text
      .toLowerCase()
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      // Hangul syllables decompose into letters (jamo) that are not marks: compose them again.
      .normalize('NFC')
      .replace(LIGATURE, (letter) => LIGATURES[letter] ?? letter)
  );
}

function visitUnspaced(run: string, visit: (term: string) => void): void {
  const chars = [...run];
  if (chars.length === 1) visit(run);
  for (let i = 0; i + 1 < chars.length; i++) visit(`${chars[i]}${chars[i + 1]}`);
}

const DIGIT = /\p{N}/u;

/** Calls `visit` with each term of `text`, in order (see `tokenize`). No array per text: search reads megabytes. */
function visitTerms(text: string, locale: string | undefined, visit: (term: string) => void): void {
  const language = languageOf(locale);
  const stop = STOP_WORDS[language];
  const plural = PLURAL_S.has(language);
  const folded = foldText(text);
  // One test per text, not per word: most texts hold no Chinese, Japanese or Korean at all.
  const unspaced = UNSPACED_ONE.test(folded);
  const word = (term: string) => {
    if (term.length === 1 && !DIGIT.test(term)) return;
    if (stop?.has(term)) return;
    visit(plural && term.length > 3 && term.endsWith('s') && !term.endsWith('ss') ? term.slice(0, -1) : term);
  };
  for (const [found] of folded.matchAll(WORD)) {
    if (!unspaced || !UNSPACED_ONE.test(found)) {
      word(found);
      continue;
    }
    // Mixed runs ("iphone用"): the spaced part is a word, the unspaced part bigrams.
    let last = 0;
    for (const run of found.matchAll(UNSPACED)) {
      if (run.index > last) word(found.slice(last, run.index));
      visitUnspaced(run[0], visit);
      last = run.index + run[0].length;
    }
    if (last < found.length) word(found.slice(last));
  }
}

/**
 * The terms of a text in the language of `locale`: words of letters and digits, case, accents and
 * ligatures folded, function words and single letters dropped, a plural -s folded where the language
 * forms plurals so; runs of Chinese, Japanese or Korean characters become overlapping bigrams.
 */
export function tokenize(text: string, locale?: string): string[] {
  const terms: string[] = [];
  visitTerms(text, locale, (term) => terms.push(term));
  return terms;
}

interface Document<A extends Searchable> {
  article: A;
  resolved: Resolved<A['translations'][number]>;
  /** Weighted frequencies of the query's terms only: nothing else is ever looked up. */
  frequencies: Map<string, number>;
  length: number;
}

function documentOf<A extends Searchable>(
  article: A,
  locale: SearchLocale,
  queryTerms: ReadonlySet<string>,
): Document<A> | undefined {
  const resolved = resolveTranslation(article.translations, locale.locale, locale) as
    | Resolved<A['translations'][number]>
    | undefined;
  if (!resolved) return undefined;
  const frequencies = new Map<string, number>();
  let length = 0;
  const add = (text: string, weight: number) =>
    visitTerms(text, resolved.locale, (term) => {
      length += weight;
      if (queryTerms.has(term)) frequencies.set(term, (frequencies.get(term) ?? 0) + weight);
    });
  add(resolved.translation.title, TITLE_WEIGHT);
  add(resolved.translation.content, 1);
  return { article, resolved, frequencies, length };
}

/** Lucene's BM25 idf: never negative, so a term in every document still counts a little. */
const idf = (documents: number, containing: number) =>
  Math.log(1 + (documents - containing + 0.5) / (containing + 0.5));

/**
 * The articles that share a term with `query`, best first, each with its score (0..1) and the
 * translation it was read in. Articles with no published translation are skipped; equal scores
 * keep the order the articles were given in. The corpus is the articles given: pass the
 * organization's published ones (`kbArticles.published`).
 */
export function rankArticles<A extends Searchable>(
  articles: readonly A[],
  query: string,
  locale: SearchLocale,
): ScoredArticle<A>[] {
  const queryTerms = [...new Set(tokenize(query, locale.locale))].slice(0, MAX_QUERY_TERMS);
  if (queryTerms.length === 0) return [];
  const wanted = new Set(queryTerms);
  const documents = articles.flatMap((article) => documentOf(article, locale, wanted) ?? []);
  if (documents.length === 0) return [];
  const averageLength = documents.reduce((sum, document) => sum + document.length, 0) / documents.length || 1;
  const weights = new Map<string, number>();
  for (const term of queryTerms) {
    const containing = documents.filter((document) => document.frequencies.has(term)).length;
    if (containing > 0) weights.set(term, idf(documents.length, containing));
  }
  const best = [...weights.values()].reduce((sum, weight) => sum + weight * (K1 + 1), 0);
  if (best === 0) return [];
  const scored: ScoredArticle<A>[] = [];
  for (const document of documents) {
    const norm = K1 * (1 - B + (B * document.length) / averageLength);
    let raw = 0;
    for (const [term, weight] of weights) {
      const frequency = document.frequencies.get(term);
      if (frequency) raw += (weight * frequency * (K1 + 1)) / (frequency + norm);
    }
    if (raw > 0)
      scored.push({ article: document.article, score: Math.min(1, raw / best), resolved: document.resolved });
  }
  // Array.prototype.sort is stable: equal scores keep the given order.
  return scored.sort((a, b) => b.score - a.score);
}
