import { idParams, isoInstant, offsetPage, offsetQuery, plainText, uuid } from './common';
import { documented, lazily, named } from './names';
import {
  localeQueryParam,
  MAX_TRANSLATIONS,
  resolutionFields,
  translationHead,
  translationInputFields,
  translationLifecycle,
} from './translation';
import * as z from './zod';

/* ---------------------------------------------------------------- collections */

export const kbCollectionTranslation = named('KbCollectionTranslation', () =>
  z.object({
    ...translationHead,
    name: z.string(),
    /** Empty when the translation has none. */
    description: z.string(),
    ...translationLifecycle,
  }),
);
export type KbCollectionTranslation = z.infer<typeof kbCollectionTranslation>;

export const kbCollection = named('KbCollection', () =>
  z.object({
    id: uuid,
    orgId: uuid,
    /** Unique in the organization whatever its case: a stable handle for integrations. */
    key: z.string(),
    /** Empty when none was given. */
    icon: z.string(),
    sortOrder: z.int(),
    name: z.string(),
    description: z.string(),
    ...resolutionFields,
    /** Published articles in the collection, kept exact by every article write. */
    articleCount: z.int(),
    translations: z.array(kbCollectionTranslation),
    createdAt: isoInstant,
    updatedAt: isoInstant,
  }),
);
export type KbCollection = z.infer<typeof kbCollection>;

export const kbCollectionPage = named('KbCollectionPage', () => offsetPage(kbCollection));

/* ---------------------------------------------------------------- articles */

export const kbArticleStatuses = ['draft', 'published', 'archived'] as const;
export const kbArticleStatus = named(
  'KbArticleStatus',
  () => z.enum(kbArticleStatuses),
  'Only `published` articles count in `articleCount` and are found by search (`q`)',
);
export type KbArticleStatus = z.infer<typeof kbArticleStatus>;

export const kbArticleTranslation = named('KbArticleTranslation', () =>
  z.object({ ...translationHead, title: z.string(), content: z.string(), ...translationLifecycle }),
);
export type KbArticleTranslation = z.infer<typeof kbArticleTranslation>;

const articleShape = {
  id: uuid,
  orgId: uuid,
  collectionId: uuid,
  /** Unique in the organization whatever its case. */
  slug: z.string(),
  status: kbArticleStatus,
  title: z.string(),
  /** Plain text: markup is removed when it is stored, as in messages. */
  content: z.string(),
  ...resolutionFields,
  translations: z.array(kbArticleTranslation),
  createdAt: isoInstant,
  updatedAt: isoInstant,
};

export const kbArticle = named('KbArticle', () => z.object(articleShape));
export type KbArticle = z.infer<typeof kbArticle>;

export const kbArticleListItem = named('KbArticleListItem', () =>
  z.object({
    ...articleShape,
    /** Only with `q`: the relevance to the query, 0 to 1 (best first). */
    score: z.optional(z.number()),
  }),
);
export type KbArticleListItem = z.infer<typeof kbArticleListItem>;

export const kbArticlePage = named('KbArticlePage', () => offsetPage(kbArticleListItem));

/* ---------------------------------------------------------------- requests */

/** A collection key or an article slug: a URL-safe handle. */
const handle = (max: number) =>
  z
    .string()
    .check(
      z.maxLength(max),
      z.regex(
        new RegExp(`^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,${max - 2}}[A-Za-z0-9])?$`),
        'Expected letters, digits, ".", "_" or "-", starting and ending with a letter or digit',
      ),
    );

export const collectionKey = handle(64);
export const articleSlug = handle(128);

export const kbSortOrder = z.int().check(z.minimum(-1_000_000), z.maximum(1_000_000));

const collectionName = z.string().check(z.trim(), z.minLength(1), z.maxLength(200), plainText());
const collectionDescription = z.string().check(z.trim(), z.maxLength(1_000), plainText());

const collectionTranslationInput = lazily(() =>
  z.strictObject({
    ...translationInputFields,
    name: collectionName,
    description: z.optional(collectionDescription),
  }),
);
export type KbCollectionTranslationInput = z.infer<typeof collectionTranslationInput>;

const collectionTranslations = lazily(() =>
  z.array(collectionTranslationInput).check(z.minLength(1), z.maxLength(MAX_TRANSLATIONS)),
);

const icon = z.string().check(z.trim(), z.maxLength(200), plainText());

export const createKbCollectionBody = named('CreateKbCollectionRequest', () =>
  z.strictObject({
    key: collectionKey,
    /** An icon name, an emoji or a URL, as the help center shows it. Default: empty. */
    icon: z.optional(icon),
    /** Default 0. Lists order by `sortOrder`, then `key`. */
    sortOrder: z.optional(kbSortOrder),
    translations: collectionTranslations,
  }),
);
export type CreateKbCollectionInput = z.infer<typeof createKbCollectionBody>;

export const updateKbCollectionBody = named('UpdateKbCollectionRequest', () =>
  z.strictObject({
    key: z.optional(collectionKey),
    icon: z.optional(icon),
    sortOrder: z.optional(kbSortOrder),
    /** The whole new set: locales left out are removed. */
    translations: z.optional(collectionTranslations),
  }),
);
export type UpdateKbCollectionInput = z.infer<typeof updateKbCollectionBody>;

/** An article's text per translation, before markup is removed. */
export const MAX_ARTICLE_CONTENT = 50_000;

const articleTranslationInput = lazily(() =>
  z.strictObject({
    ...translationInputFields,
    title: z.string().check(z.trim(), z.minLength(1), z.maxLength(200), plainText()),
    content: z.string().check(z.trim(), z.minLength(1), z.maxLength(MAX_ARTICLE_CONTENT), plainText()),
  }),
);
export type KbArticleTranslationInput = z.infer<typeof articleTranslationInput>;

const articleTranslations = lazily(() =>
  z.array(articleTranslationInput).check(z.minLength(1), z.maxLength(MAX_TRANSLATIONS)),
);

export const createKbArticleBody = named('CreateKbArticleRequest', () =>
  z.strictObject({
    /** A collection of the organization (another is 422 naming `collectionId`). */
    collectionId: uuid,
    slug: articleSlug,
    /** Default `draft`. */
    status: z.optional(kbArticleStatus),
    translations: articleTranslations,
  }),
);
export type CreateKbArticleInput = z.infer<typeof createKbArticleBody>;

export const updateKbArticleBody = named('UpdateKbArticleRequest', () =>
  z.strictObject({
    collectionId: z.optional(uuid),
    slug: z.optional(articleSlug),
    status: z.optional(kbArticleStatus),
    /** The whole new set: locales left out are removed. */
    translations: z.optional(articleTranslations),
  }),
);
export type UpdateKbArticleInput = z.infer<typeof updateKbArticleBody>;

export const MAX_QUERY_LENGTH = 500;

export const listKbCollectionsQuery = lazily(() =>
  z.strictObject({ ...offsetQuery, locale: localeQueryParam }),
);

export const getKbItemQuery = lazily(() => z.strictObject({ locale: localeQueryParam }));

export const listKbArticlesQuery = lazily(() =>
  z.strictObject({
    ...offsetQuery,
    locale: localeQueryParam,
    status: z.optional(kbArticleStatus),
    collectionId: z.optional(uuid),
    q: z.optional(
      documented(z.string().check(z.trim(), z.minLength(1), z.maxLength(MAX_QUERY_LENGTH), plainText()), {
        description:
          'Search: published articles ranked by relevance to this text (best first, each with a `score`)',
      }),
    ),
  }),
);
export type ListKbArticlesQuery = z.infer<typeof listKbArticlesQuery>;

export const kbParams = idParams;
