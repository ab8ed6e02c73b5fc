import type { LocaleResolver, Localizable, Resolved } from './resolve';

/**
 * What a resolved answer adds to a stored localized thing (a custom field and each of its options,
 * a knowledge-base collection, an article): the texts of the translation that answers, the locale
 * that answered and whether the request was met. With nothing published, `texts` is given no
 * translation and names its fallbacks (a key, a slug, a value): storage should never hold such a
 * thing, the fallbacks only keep the answer whole. The presenter projects the stored thing with
 * these beside it, so only the resource's fields, in its order, reach the answer.
 */
export function resolvedTexts<T extends Localizable, Texts extends object>(
  resolver: LocaleResolver,
  translations: readonly T[],
  texts: (translation: T | undefined) => Texts,
  resolved: Resolved<T> | undefined = resolver.resolve(translations),
): Texts & { locale: string; fallbackUsed: boolean } {
  return {
    ...texts(resolved?.translation),
    locale: resolved?.locale ?? resolver.locale,
    fallbackUsed: resolved?.fallbackUsed ?? true,
  };
}

/** The order of a list: `sortOrder`, then a name (a collection's key, a field's name). */
export const bySortOrderThen =
  <T extends { sortOrder: number }>(nameOf: (item: T) => string) =>
  (a: T, b: T): number => {
    const first = nameOf(a);
    const second = nameOf(b);
    return a.sortOrder - b.sortOrder || (first < second ? -1 : first > second ? 1 : 0);
  };
