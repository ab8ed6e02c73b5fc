import type { KbArticleDefinition, StoredKbCollection } from '../db/kb';
import { project } from '../db/project';
import { bySortOrderThen, resolvedTexts } from '../locale/localized';
import type { LocaleResolver, Resolved } from '../locale/resolve';
import type { KbArticle, KbArticleTranslation, KbCollection } from '../schemas/kb';
import { kbArticleProjection, kbCollectionProjection } from '../schemas/projections';

/** The order of the collection list: `sortOrder`, then `key`. */
export const collectionOrder = bySortOrderThen<StoredKbCollection>((collection) => collection.key);

const toCollection = project<KbCollection>(kbCollectionProjection);
const toArticle = project<KbArticle>(kbArticleProjection);

/** A collection as the API answers it, resolved for one read: its name and description from one translation. */
export const presentCollection = (collection: StoredKbCollection, resolver: LocaleResolver): KbCollection =>
  toCollection({
    ...collection,
    ...resolvedTexts(resolver, collection.translations, (translation) => ({
      name: translation?.name ?? collection.key,
      description: translation?.description ?? '',
    })),
    articleCount: collection.articleCounts.published,
  });

/**
 * An article as the API answers it: title and content from one translation (resolved for the read,
 * or the one search read it in), and every translation, drafts and lifecycle included.
 */
export const presentArticle = (
  article: KbArticleDefinition,
  resolver: LocaleResolver,
  resolved?: Resolved<KbArticleTranslation>,
): KbArticle =>
  toArticle({
    ...article,
    ...resolvedTexts(
      resolver,
      article.translations,
      (translation) => ({ title: translation?.title ?? article.slug, content: translation?.content ?? '' }),
      resolved,
    ),
  });
