import { clock } from '../../shared/clock';
import { actorOf } from '../../shared/conversations/actor';
import { kbArticles } from '../../shared/db/kb';
import { NotFoundError, ValidationError } from '../../shared/errors';
import { created, ok, route } from '../../shared/http/route';
import { uuidv7 } from '../../shared/ids';
import { presentArticle } from '../../shared/kb/present';
import { rankArticles } from '../../shared/kb/search';
import { localeResolver } from '../../shared/locale/resolve';
import { paginationOf, successResult } from '../../shared/schemas/common';
import {
  createKbArticleBody,
  getKbItemQuery,
  type KbArticleListItem,
  kbArticle,
  kbArticlePage,
  kbParams,
  listKbArticlesQuery,
  updateKbArticleBody,
} from '../../shared/schemas/kb';
import {
  createKbArticleExample,
  kbArticleExample,
  kbSearchPageExample,
} from '../../shared/schemas/kb-examples';
import { assertValidTranslations, reviseArticleTranslations, sameExceptUpdatedAt } from './definition';
import { ARTICLE_RULES, RESOLUTION, SEARCH, TRANSLATION_RULES } from './docs';

const TAG = 'Knowledge base';

/**
 * A page's answer stays below this many bytes: Lambda answers at most 6 MB. Articles are at most
 * 300 KB each (twice that resolved), so only a page of many very large articles stops early.
 */
const MAX_ANSWER_BYTES = 4_000_000;

/** The leading items of a page that fit in one answer (at least one). */
function withinAnswer<T>(items: readonly T[]): T[] {
  let bytes = 0;
  const kept: T[] = [];
  for (const item of items) {
    bytes += Buffer.byteLength(JSON.stringify(item), 'utf8');
    if (kept.length > 0 && bytes > MAX_ANSWER_BYTES) break;
    kept.push(item);
  }
  return kept;
}

/** Scores are shown to 4 decimals: enough to compare, stable to read. */
const rounded = (score: number) => Math.round(score * 10_000) / 10_000;

export const listKbArticles = route({
  method: 'GET',
  path: '/api/kb/articles',
  operationId: 'listKbArticles',
  summary: 'List or search knowledge-base articles',
  description: [
    'Without `q`: an offset page of the organization’s articles, newest first, narrowed by `status` and `collectionId` (a collection of another organization simply has no articles here); `pagination.totalItems` comes from the article counters, kept exact by every write. Each article is resolved for `locale` and lists its whole translation set with its localization lifecycle.',
    SEARCH,
    `A page stops early, before 4 MB of answer, only when its articles are very large: continue from \`offset\` + the number of articles received. ${RESOLUTION}`,
  ].join('\n\n'),
  tag: TAG,
  scope: 'knowledge-base:read',
  callers: ['apiKey', 'operator'],
  query: listKbArticlesQuery,
  response: { status: 200, schema: kbArticlePage, description: 'A page of articles, resolved' },
  examples: { response: kbSearchPageExample },
  handle: async ({ caller, organization, query }) => {
    const resolver = localeResolver(organization, query.locale);
    const { offset, limit } = query;
    if (query.q !== undefined) {
      if (query.status !== undefined && query.status !== 'published') {
        throw ValidationError.field('status', 'Search (`q`) finds published articles only', {
          reason: 'search_published_only',
        });
      }
      const published = await kbArticles.published(caller.orgId, { collectionId: query.collectionId });
      const ranked = rankArticles(published, query.q, {
        locale: resolver.locale,
        defaultLocale: organization.defaultLocale,
      });
      const data: KbArticleListItem[] = ranked.slice(offset, offset + limit).map((hit) => ({
        ...presentArticle(hit.article, resolver, hit.resolved),
        score: rounded(hit.score),
      }));
      return ok({ data: withinAnswer(data), pagination: paginationOf(offset, limit, ranked.length) });
    }
    const filter = { status: query.status, collectionId: query.collectionId };
    const [articles, totalItems] = await Promise.all([
      kbArticles.page(caller.orgId, filter, offset, limit),
      kbArticles.count(caller.orgId, filter),
    ]);
    const data = articles.map((article) => presentArticle(article, resolver));
    return ok({ data: withinAnswer(data), pagination: paginationOf(offset, limit, totalItems) });
  },
});

export const createKbArticle = route({
  method: 'POST',
  path: '/api/kb/articles',
  operationId: 'createKbArticle',
  summary: 'Create a knowledge-base article',
  description: [
    ARTICLE_RULES,
    TRANSLATION_RULES,
    `The answer is resolved for the organization’s default locale. ${RESOLUTION}`,
  ].join('\n\n'),
  tag: TAG,
  scope: 'knowledge-base:write',
  callers: ['apiKey', 'operator'],
  body: createKbArticleBody,
  response: { status: 201, schema: kbArticle, description: 'The new article, resolved' },
  errors: [409],
  examples: { request: createKbArticleExample, response: kbArticleExample },
  handle: async ({ caller, organization, body }) => {
    assertValidTranslations(organization, body.translations);
    const now = clock.nowIso();
    const stored = await kbArticles.create({
      id: uuidv7(),
      orgId: caller.orgId,
      collectionId: body.collectionId,
      slug: body.slug,
      status: body.status ?? 'draft',
      translations: reviseArticleTranslations([], body.translations, { now, reviewer: actorOf(caller).id }),
      createdAt: now,
      updatedAt: now,
    });
    return created(presentArticle(stored, localeResolver(organization, undefined)));
  },
});

export const getKbArticle = route({
  method: 'GET',
  path: '/api/kb/articles/{id}',
  operationId: 'getKbArticle',
  summary: 'Get a knowledge-base article',
  description: `One article of any status: \`title\` and \`content\` resolved for \`locale\`, and the complete stored translation set. An id of another organization is 404. ${RESOLUTION}`,
  tag: TAG,
  scope: 'knowledge-base:read',
  callers: ['apiKey', 'operator'],
  params: kbParams,
  query: getKbItemQuery,
  response: { status: 200, schema: kbArticle, description: 'The article, resolved' },
  errors: [404],
  examples: { response: kbArticleExample },
  handle: async ({ caller, organization, params, query }) => {
    const resolver = localeResolver(organization, query.locale);
    const article = await kbArticles.get(caller.orgId, params.id);
    if (!article) throw new NotFoundError('Article not found');
    return ok(presentArticle(article, resolver));
  },
});

export const updateKbArticle = route({
  method: 'PATCH',
  path: '/api/kb/articles/{id}',
  operationId: 'updateKbArticle',
  summary: 'Update a knowledge-base article',
  description: [
    'Writes only the fields present: `status` (publish, unpublish, archive), `slug`, `collectionId` (move), `translations` (the whole new set: locales left out are removed). A change of status or collection moves the article between the collections’ `articleCount`s in the same transaction.',
    ARTICLE_RULES,
    TRANSLATION_RULES,
    `A body that changes nothing writes nothing and keeps \`updatedAt\`. The answer is resolved for the organization’s default locale. ${RESOLUTION}`,
  ].join('\n\n'),
  tag: TAG,
  scope: 'knowledge-base:write',
  callers: ['apiKey', 'operator'],
  params: kbParams,
  body: updateKbArticleBody,
  response: { status: 200, schema: kbArticle, description: 'The article after the change, resolved' },
  errors: [404, 409],
  examples: { request: { status: 'published' }, response: kbArticleExample },
  handle: async ({ caller, organization, params, body }) => {
    assertValidTranslations(organization, body.translations);
    const context = { now: clock.nowIso(), reviewer: actorOf(caller).id };
    const stored = await kbArticles.update(caller.orgId, params.id, (current) => {
      const next = {
        ...current,
        ...(body.collectionId !== undefined ? { collectionId: body.collectionId } : {}),
        ...(body.slug !== undefined ? { slug: body.slug } : {}),
        ...(body.status !== undefined ? { status: body.status } : {}),
        ...(body.translations
          ? { translations: reviseArticleTranslations(current.translations, body.translations, context) }
          : {}),
      };
      return sameExceptUpdatedAt(current, next) ? undefined : { ...next, updatedAt: context.now };
    });
    if (!stored) throw new NotFoundError('Article not found');
    return ok(presentArticle(stored, localeResolver(organization, undefined)));
  },
});

export const deleteKbArticle = route({
  method: 'DELETE',
  path: '/api/kb/articles/{id}',
  operationId: 'deleteKbArticle',
  summary: 'Delete a knowledge-base article',
  description:
    'Permanent: the article goes with every translation, its collection’s `articleCount` drops in the same transaction when it was published, and its slug can be used again.',
  tag: TAG,
  scope: 'knowledge-base:write',
  callers: ['apiKey', 'operator'],
  params: kbParams,
  response: { status: 200, schema: successResult, description: 'Deleted' },
  errors: [404],
  examples: { response: { success: true } },
  handle: async ({ caller, params }) => {
    if (!(await kbArticles.remove(caller.orgId, params.id))) throw new NotFoundError('Article not found');
    return ok({ success: true });
  },
});
