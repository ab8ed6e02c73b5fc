import type { KbArticleDefinition, StoredKbCollection } from '../db/kb';
import type { LocaleResolver, Resolved } from '../locale/resolve';
import type { KbArticle, KbArticleTranslation, KbCollection } from '../schemas/kb';

/** The order of the collection list: `sortOrder`, then `key`. */
export const collectionOrder = (a: StoredKbCollection, b: StoredKbCollection): number =>
  a.sortOrder - b.sortOrder || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/**
 * A collection as the API answers it, resolved for one read. A collection always has a published
 * translation (create and PATCH require one); the fallback to its key only keeps the answer whole
 * should storage ever hold none.
 */
export function presentCollection(collection: StoredKbCollection, resolver: LocaleResolver): KbCollection {
  const resolved = resolver.resolve(collection.translations);
  return {
    id: collection.id,
    orgId: collection.orgId,
    key: collection.key,
    icon: collection.icon,
    sortOrder: collection.sortOrder,
    name: resolved?.translation.name ?? collection.key,
    description: resolved?.translation.description ?? '',
    locale: resolved?.locale ?? resolver.locale,
    fallbackUsed: resolved?.fallbackUsed ?? true,
    articleCount: collection.articleCounts.published,
    translations: collection.translations,
    createdAt: collection.createdAt,
    updatedAt: collection.updatedAt,
  };
}

/**
 * An article as the API answers it: title and content from one translation (resolved for the read,
 * or the one search read it in), and every translation as stored, drafts and lifecycle included.
 */
export function presentArticle(
  article: KbArticleDefinition,
  resolver: LocaleResolver,
  resolved: Resolved<KbArticleTranslation> | undefined = resolver.resolve(article.translations),
): KbArticle {
  return {
    id: article.id,
    orgId: article.orgId,
    collectionId: article.collectionId,
    slug: article.slug,
    status: article.status,
    title: resolved?.translation.title ?? article.slug,
    content: resolved?.translation.content ?? '',
    locale: resolved?.locale ?? resolver.locale,
    fallbackUsed: resolved?.fallbackUsed ?? true,
    translations: article.translations,
    createdAt: article.createdAt,
    updatedAt: article.updatedAt,
  };
}
