import { ValidationError } from '../errors';

/**
 * Locale resolution, once for every localized thing of the API: custom-field labels, placeholders,
 * validation messages and option labels now; knowledge-base collection names and descriptions and
 * article titles and content next. A localized thing is a set of translations, one per locale; a
 * read names the locale it wants and gets one translation, whole (the texts of an answer never mix
 * locales), with the locale that answered and whether the request was met.
 */
export type TranslationStatus = 'draft' | 'published';

export interface Localizable {
  locale: string;
  status: TranslationStatus;
}

/** What resolution needs of the organization (an `Organization` is one). */
export interface LocaleSettings {
  locales: readonly string[];
  defaultLocale: string;
}

export interface Resolved<T> {
  translation: T;
  /** The locale of the translation that answered. */
  locale: string;
  /** True when the requested locale had no published translation. */
  fallbackUsed: boolean;
}

/**
 * The locale a read asks for: the `locale` parameter when the organization has enabled it (any
 * other is 422 naming the parameter), else the organization's default. Checked before anything is
 * read, so a request for a locale the organization does not serve fails the same way everywhere.
 */
export function requestedLocale(
  settings: LocaleSettings,
  requested: string | undefined,
  parameter = 'locale',
): string {
  if (requested === undefined) return settings.defaultLocale;
  if (!settings.locales.includes(requested)) {
    throw ValidationError.field(
      parameter,
      `The organization has not enabled the locale "${requested}" (enabled: ${settings.locales.join(', ')})`,
      { reason: 'locale_not_enabled' },
    );
  }
  return requested;
}

/**
 * The translation that answers a read for `requested`: the published one in that locale, else the
 * published one in the organization's default locale, else the first published one in the stored
 * order. Drafts never answer. Undefined when nothing is published.
 */
export function resolveTranslation<T extends Localizable>(
  translations: readonly T[],
  requested: string,
  settings: Pick<LocaleSettings, 'defaultLocale'>,
): Resolved<T> | undefined {
  let byDefault: T | undefined;
  let first: T | undefined;
  for (const translation of translations) {
    if (translation.status !== 'published') continue;
    if (translation.locale === requested) return { translation, locale: requested, fallbackUsed: false };
    if (translation.locale === settings.defaultLocale) byDefault ??= translation;
    first ??= translation;
  }
  const answer = byDefault ?? first;
  return answer ? { translation: answer, locale: answer.locale, fallbackUsed: true } : undefined;
}

/**
 * A resolver bound to one read: the locale parameter checked once (422 before any storage read),
 * then every translation set of the answer (a field and each of its options, a collection, an
 * article) resolved against it.
 */
export function localeResolver(
  settings: LocaleSettings,
  requested: string | undefined,
  parameter = 'locale',
) {
  const locale = requestedLocale(settings, requested, parameter);
  return {
    locale,
    resolve: <T extends Localizable>(translations: readonly T[]) =>
      resolveTranslation(translations, locale, settings),
  };
}
export type LocaleResolver = ReturnType<typeof localeResolver>;
