import type { LocaleSettings } from '../../shared/locale/resolve';
import {
  assertNoProblems,
  type RevisionContext,
  reviseTranslations,
  translationSetProblems,
} from '../../shared/locale/translations';
import { sanitizeText } from '../../shared/sanitize/text';
import type {
  KbArticleTranslation,
  KbArticleTranslationInput,
  KbCollectionTranslation,
  KbCollectionTranslationInput,
} from '../../shared/schemas/kb';

/**
 * The rules of a translation set that need the organization (locales enabled, one per locale). A set
 * of drafts only is accepted: a collection or article being written is not yet published anywhere,
 * and a read of it answers its key or slug and an empty text, with `fallbackUsed` true.
 */
export function assertValidTranslations(
  settings: LocaleSettings,
  translations: readonly (KbCollectionTranslationInput | KbArticleTranslationInput)[] | undefined,
): void {
  if (translations)
    assertNoProblems(
      translationSetProblems(translations, settings, 'translations', { requirePublished: false }),
    );
}

interface CollectionTexts {
  name: string;
  description: string;
}

const collectionTexts = (entry: { name: string; description?: string | undefined }): CollectionTexts => ({
  name: entry.name,
  description: entry.description ?? '',
});

/** The collection's translation set after a write that sends `input` as the whole new set. */
export function reviseCollectionTranslations(
  previous: readonly KbCollectionTranslation[],
  input: readonly KbCollectionTranslationInput[],
  context: RevisionContext,
): KbCollectionTranslation[] {
  return reviseTranslations<CollectionTexts>(
    previous,
    input.map((entry) => ({ ...entry, ...collectionTexts(entry) })),
    collectionTexts,
    context,
  );
}

interface ArticleTexts {
  title: string;
  content: string;
}

const articleTexts = (entry: ArticleTexts): ArticleTexts => ({ title: entry.title, content: entry.content });

/**
 * The article's translation set after a write that sends `input` as the whole new set. Titles and
 * contents are sanitized as messages are (markup removed, text kept); one left empty is 422.
 */
export function reviseArticleTranslations(
  previous: readonly KbArticleTranslation[],
  input: readonly KbArticleTranslationInput[],
  context: RevisionContext,
): KbArticleTranslation[] {
  const problems: Record<string, string> = {};
  const sanitized = input.map((entry, i) => {
    const title = sanitizeText(entry.title);
    const content = sanitizeText(entry.content);
    if (title === '') problems[`translations.${i}.title`] = 'The title has no text once sanitized';
    if (content === '') problems[`translations.${i}.content`] = 'The content has no text once sanitized';
    return { ...entry, title, content };
  });
  assertNoProblems(problems);
  return reviseTranslations<ArticleTexts>(previous, sanitized, articleTexts, context);
}

/** True when the two say the same (the write would change nothing). */
export function sameExceptUpdatedAt<T extends { updatedAt: string }>(a: T, b: T): boolean {
  return JSON.stringify({ ...a, updatedAt: '' }) === JSON.stringify({ ...b, updatedAt: '' });
}
