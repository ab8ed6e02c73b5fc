import { isoInstant, localeTag, uuid } from './common';
import { documented, named } from './names';
import * as z from './zod';

/**
 * The pieces every localized resource shares (custom fields and their options now, knowledge-base
 * collections and articles next): the lifecycle fields of a stored translation, the fields a client
 * sends for one, and the two fields a resolved answer adds. Resources compose them around their own
 * texts, so each translation schema reads `id, locale, status, <texts>, <lifecycle>`.
 */
export const translationStatus = named(
  'TranslationStatus',
  () => z.enum(['draft', 'published']),
  'A draft never answers a read; only published translations are resolved',
);

/** Before the texts. */
export const translationHead = {
  id: uuid,
  locale: z.string(),
  status: translationStatus,
};

/** After the texts. */
export const translationLifecycle = {
  /** The locale the text was translated from, if any. */
  sourceLocale: z.nullable(z.string()),
  /** When a machine translated it (as the client reported). */
  machineTranslatedAt: z.nullable(isoInstant),
  /** When a person last confirmed the current text, and who: an operator id or an API key's id. */
  reviewedAt: z.nullable(isoInstant),
  reviewedBy: z.nullable(uuid),
  createdAt: isoInstant,
  updatedAt: isoInstant,
};

/** What a client sends beside the texts of one translation. */
export const translationInputFields = {
  locale: localeTag,
  status: translationStatus,
  sourceLocale: z.optional(z.nullable(localeTag)),
  machineTranslatedAt: z.optional(z.nullable(isoInstant)),
  /**
   * `true` records a review of the text now, by the caller; `false` withdraws one. Left out, a
   * review stays while the text stays the same.
   */
  reviewed: z.optional(z.boolean()),
};

/** What a resolved answer says about its resolution. */
export const resolutionFields = {
  /** The locale of the translation that answered. */
  locale: z.string(),
  /** True when the requested locale (or the default, when none was requested) had no published translation. */
  fallbackUsed: z.boolean(),
};

/** `?locale=` of a localized read. */
export const localeQueryParam = z.optional(
  documented(z.string().check(z.maxLength(64), z.regex(/^[A-Za-z0-9-]+$/)), {
    description:
      'The locale to answer in: a BCP 47 tag the organization has enabled (another is 422 naming `locale`). Default: the organization’s default locale',
  }),
);

/** Translations per localized thing: an organization enables at most 100 locales. */
export const MAX_TRANSLATIONS = 100;
