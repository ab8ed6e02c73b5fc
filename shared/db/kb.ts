import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError, ValidationError } from '../errors';
import type { KbArticleStatus, KbArticleTranslation, KbCollectionTranslation } from '../schemas/kb';
import { batchGet } from './batch';
import { db, tableName } from './client';
import { keys } from './keys';
import { childrenQuery, queryPrefix } from './query';
import { retryOnConflict, transact, type Write } from './transaction';

/**
 * The knowledge base: one partition per organization (`ORG#o#KB`) holds its collections, articles,
 * the guards that keep collection keys and article slugs unique, and one totals item. Items are
 * stored unresolved; answers resolve them per request (shared/locale). Article counts are counters,
 * moved by ADD in the transaction of every article write that changes them, never counted.
 */

export interface KbCollectionDefinition {
  id: string;
  orgId: string;
  key: string;
  icon: string;
  sortOrder: number;
  translations: KbCollectionTranslation[];
  createdAt: string;
  updatedAt: string;
}

/** Articles of one collection (or of the organization) by status. */
export type ArticleCounts = Record<KbArticleStatus, number>;

export interface StoredKbCollection extends KbCollectionDefinition {
  /** Fences writers of the collection's own fields: each write is conditioned on the `rev` it read. */
  rev: number;
  storedBytes: number;
  articleCounts: ArticleCounts;
}

export interface KbArticleDefinition {
  id: string;
  orgId: string;
  collectionId: string;
  slug: string;
  status: KbArticleStatus;
  translations: KbArticleTranslation[];
  createdAt: string;
  updatedAt: string;
}

export interface StoredKbArticle extends KbArticleDefinition {
  rev: number;
  storedBytes: number;
}

/**
 * One collection or article as JSON. DynamoDB's 400 KB item limit counts attribute names and values,
 * which the JSON text over-approximates; 300 000 bytes leaves room for the keys and the rest.
 */
export const MAX_ITEM_BYTES = 300_000;
/** All collections of an organization: a list page (≤ 100 of them, resolved) stays far below 6 MB. */
export const MAX_COLLECTION_BYTES = 2_000_000;
/**
 * All articles of an organization. Search reads the published ones per request (one Query page per
 * MB), so this is what bounds a search's cost: about 1,600 articles of 5 KB.
 */
export const MAX_ARTICLE_BYTES = 8_000_000;

/** Counter attributes, on a collection and on the totals item. */
const COUNTER: Record<KbArticleStatus, string> = {
  draft: 'draftArticles',
  published: 'publishedArticles',
  archived: 'archivedArticles',
};

const sizeOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');

function sized(value: KbCollectionDefinition | KbArticleDefinition, field: string): number {
  const bytes = sizeOf(value);
  if (bytes > MAX_ITEM_BYTES) {
    throw ValidationError.field(
      field,
      `This would take ${bytes} bytes; at most ${MAX_ITEM_BYTES} are allowed: shorter or fewer translations`,
      { reason: 'too_large' },
    );
  }
  return bytes;
}

const countsOf = (item: Record<string, unknown>): ArticleCounts => ({
  draft: Number(item[COUNTER.draft] ?? 0),
  published: Number(item[COUNTER.published] ?? 0),
  archived: Number(item[COUNTER.archived] ?? 0),
});

export const totalOf = (counts: ArticleCounts): number => counts.draft + counts.published + counts.archived;

function collectionOf(item: Record<string, unknown>): StoredKbCollection {
  return {
    id: String(item.id),
    orgId: String(item.orgId),
    key: String(item.key),
    icon: String(item.icon ?? ''),
    sortOrder: Number(item.sortOrder ?? 0),
    translations: (item.translations as KbCollectionTranslation[] | undefined) ?? [],
    createdAt: String(item.createdAt),
    updatedAt: String(item.updatedAt),
    rev: Number(item.rev ?? 1),
    storedBytes: Number(item.storedBytes ?? 0),
    articleCounts: countsOf(item),
  };
}

function articleOf(item: Record<string, unknown>): StoredKbArticle {
  return {
    id: String(item.id),
    orgId: String(item.orgId),
    collectionId: String(item.collectionId),
    slug: String(item.slug),
    status: item.status as KbArticleStatus,
    translations: (item.translations as KbArticleTranslation[] | undefined) ?? [],
    createdAt: String(item.createdAt),
    updatedAt: String(item.updatedAt),
    rev: Number(item.rev ?? 1),
    storedBytes: Number(item.storedBytes ?? 0),
  };
}

export function collectionDefinition(stored: StoredKbCollection): KbCollectionDefinition {
  const { rev: _rev, storedBytes: _bytes, articleCounts: _counts, ...definition } = stored;
  return definition;
}

export function articleDefinition(stored: StoredKbArticle): KbArticleDefinition {
  const { rev: _rev, storedBytes: _bytes, ...definition } = stored;
  return definition;
}

const budgetExceeded = (what: 'collections' | 'articles', max: number) => () =>
  new ConflictError(
    `The organization's knowledge-base ${what} would exceed ${max} bytes together: delete unused ones first`,
    { reason: 'knowledge_base_budget_exceeded' },
  );

/**
 * Adds to the organization's totals: stored bytes (growth refused past the budget) and article
 * counts by status. Undefined when nothing changes.
 */
function totalsWrite(
  orgId: string,
  change: { collectionBytes?: number; articleBytes?: number; counts?: Partial<ArticleCounts> },
): Write | undefined {
  const adds: [string, number][] = [];
  if (change.collectionBytes) adds.push(['collectionBytes', change.collectionBytes]);
  if (change.articleBytes) adds.push(['articleBytes', change.articleBytes]);
  for (const [status, delta] of Object.entries(change.counts ?? {}) as [KbArticleStatus, number][])
    if (delta) adds.push([COUNTER[status], delta]);
  if (adds.length === 0) return undefined;
  const growing = adds.find(([name, delta]) => name.endsWith('Bytes') && delta > 0);
  const max = growing?.[0] === 'collectionBytes' ? MAX_COLLECTION_BYTES : MAX_ARTICLE_BYTES;
  return {
    action: {
      Update: {
        TableName: tableName,
        Key: keys.kbTotals(orgId),
        UpdateExpression: `SET entity = :entity ADD ${adds.map((_, i) => `#a${i} :a${i}`).join(', ')}`,
        ...(growing ? { ConditionExpression: `attribute_not_exists(#grow) OR #grow <= :room` } : {}),
        ExpressionAttributeNames: {
          ...Object.fromEntries(adds.map(([name], i) => [`#a${i}`, name])),
          ...(growing ? { '#grow': growing[0] } : {}),
        },
        ExpressionAttributeValues: {
          ':entity': 'kbTotals',
          ...Object.fromEntries(adds.map(([, delta], i) => [`:a${i}`, delta])),
          ...(growing ? { ':room': max - growing[1] } : {}),
        },
      },
    },
    ...(growing
      ? {
          onConditionFailed: budgetExceeded(
            growing[0] === 'collectionBytes' ? 'collections' : 'articles',
            max,
          ),
        }
      : {}),
  };
}

const collectionMissing = () =>
  ValidationError.field('collectionId', 'No such collection in this organization', {
    reason: 'collection_not_found',
  });

/** ADD to a collection's counters; `mustExist` refuses a collection that is not there (422). */
function collectionCountsWrite(
  orgId: string,
  collectionId: string,
  counts: Partial<ArticleCounts>,
  mustExist: boolean,
): Write | undefined {
  const adds = (Object.entries(counts) as [KbArticleStatus, number][]).filter(([, delta]) => delta !== 0);
  if (adds.length === 0 && !mustExist) return undefined;
  if (adds.length === 0) {
    return {
      action: {
        ConditionCheck: {
          TableName: tableName,
          Key: keys.kbCollection(orgId, collectionId),
          ConditionExpression: 'attribute_exists(pk)',
        },
      },
      onConditionFailed: collectionMissing,
    };
  }
  return {
    action: {
      Update: {
        TableName: tableName,
        Key: keys.kbCollection(orgId, collectionId),
        UpdateExpression: `ADD ${adds.map((_, i) => `#c${i} :c${i}`).join(', ')}`,
        ...(mustExist ? { ConditionExpression: 'attribute_exists(pk)' } : {}),
        ExpressionAttributeNames: Object.fromEntries(adds.map(([status], i) => [`#c${i}`, COUNTER[status]])),
        ExpressionAttributeValues: Object.fromEntries(adds.map(([, delta], i) => [`:c${i}`, delta])),
      },
    },
    ...(mustExist ? { onConditionFailed: collectionMissing } : {}),
  };
}

const present = <T>(writes: readonly (T | undefined)[]): T[] => writes.filter((w): w is T => w !== undefined);

const keyTaken = (key: string) => () =>
  new ConflictError(`A collection with the key "${key}" already exists`, { reason: 'key_taken' });
const slugTaken = (slug: string) => () =>
  new ConflictError(`An article with the slug "${slug}" already exists`, { reason: 'slug_taken' });

async function getItem(key: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
  return Item;
}

/* ---------------------------------------------------------------- collections */

export const kbCollections = {
  /** One transaction: the collection (counters at 0), its key guard (409) and the totals. */
  async create(definition: KbCollectionDefinition): Promise<StoredKbCollection> {
    const storedBytes = sized(definition, 'translations');
    const articleCounts: ArticleCounts = { draft: 0, published: 0, archived: 0 };
    const stored: StoredKbCollection = { ...definition, rev: 1, storedBytes, articleCounts };
    const { orgId } = definition;
    const writes = present<Write>([
      {
        action: {
          Put: {
            TableName: tableName,
            Item: {
              ...keys.kbCollection(orgId, definition.id),
              entity: 'kbCollection',
              ...definition,
              rev: 1,
              storedBytes,
              [COUNTER.draft]: 0,
              [COUNTER.published]: 0,
              [COUNTER.archived]: 0,
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      },
      {
        action: {
          Put: {
            TableName: tableName,
            Item: {
              ...keys.kbCollectionKey(orgId, definition.key),
              entity: 'kbCollectionKey',
              collectionId: definition.id,
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        onConditionFailed: keyTaken(definition.key),
      },
      totalsWrite(orgId, { collectionBytes: storedBytes }),
    ]);
    // Two creates at once touch the same guard or totals: the loser is cancelled and tries again,
    // meeting the winner's guard (409) or fitting in beside it.
    await retryOnConflict((budget) => transact(writes, { budget }));
    return stored;
  },

  /** Every collection of the organization (bounded by the collection budget): one Query per 1 MB page. */
  async all(orgId: string): Promise<StoredKbCollection[]> {
    const items = await queryPrefix(keys.kbPartition(orgId), keys.kbCollectionPrefix, { consistent: true });
    return items.map(collectionOf);
  },

  /** One strongly consistent GetItem. */
  async get(orgId: string, collectionId: string): Promise<StoredKbCollection | undefined> {
    const item = await getItem(keys.kbCollection(orgId, collectionId));
    return item ? collectionOf(item) : undefined;
  },

  /**
   * Read, change, write the collection's own fields on `rev` (an UpdateItem: the article counters,
   * which article writes ADD to without touching `rev`, are never overwritten), swapping the key
   * guard when the key changes. `change` returns undefined when nothing changes (nothing is written).
   */
  async update(
    orgId: string,
    collectionId: string,
    change: (current: KbCollectionDefinition) => KbCollectionDefinition | undefined,
  ): Promise<StoredKbCollection | undefined> {
    return retryOnConflict(async (budget) => {
      const current = await kbCollections.get(orgId, collectionId);
      if (!current) return undefined;
      const next = change(collectionDefinition(current));
      if (!next) return current;
      const storedBytes = sized(next, 'translations');
      const stored: StoredKbCollection = {
        ...next,
        rev: current.rev + 1,
        storedBytes,
        articleCounts: current.articleCounts,
      };
      const keyMoved = next.key.toLowerCase() !== current.key.toLowerCase();
      await transact(
        present<Write>([
          {
            action: {
              Update: {
                TableName: tableName,
                Key: keys.kbCollection(orgId, collectionId),
                UpdateExpression:
                  'SET #key = :key, #icon = :icon, #sortOrder = :sortOrder, #translations = :translations, #updatedAt = :updatedAt, #bytes = :bytes, #rev = :next',
                ConditionExpression: '#rev = :rev',
                ExpressionAttributeNames: {
                  '#key': 'key',
                  '#icon': 'icon',
                  '#sortOrder': 'sortOrder',
                  '#translations': 'translations',
                  '#updatedAt': 'updatedAt',
                  '#bytes': 'storedBytes',
                  '#rev': 'rev',
                },
                ExpressionAttributeValues: {
                  ':key': next.key,
                  ':icon': next.icon,
                  ':sortOrder': next.sortOrder,
                  ':translations': next.translations,
                  ':updatedAt': next.updatedAt,
                  ':bytes': storedBytes,
                  ':next': current.rev + 1,
                  ':rev': current.rev,
                },
              },
            },
          },
          ...(keyMoved
            ? [
                {
                  action: {
                    Put: {
                      TableName: tableName,
                      Item: {
                        ...keys.kbCollectionKey(orgId, next.key),
                        entity: 'kbCollectionKey',
                        collectionId,
                      },
                      ConditionExpression: 'attribute_not_exists(pk)',
                    },
                  },
                  onConditionFailed: keyTaken(next.key),
                },
                {
                  action: { Delete: { TableName: tableName, Key: keys.kbCollectionKey(orgId, current.key) } },
                },
              ]
            : []),
          totalsWrite(orgId, { collectionBytes: storedBytes - current.storedBytes }),
        ]),
        { budget },
      );
      return stored;
    });
  },

  /**
   * Deletes an empty collection with its key guard. `missing` when there is none, `not_empty` while
   * it holds articles of any status (the Delete is conditioned on its counters, so an article
   * created meanwhile makes this a conflict, read again).
   */
  async remove(
    orgId: string,
    collectionId: string,
  ): Promise<{ outcome: 'deleted' | 'missing' } | { outcome: 'not_empty'; articleCounts: ArticleCounts }> {
    return retryOnConflict(async (budget) => {
      const current = await kbCollections.get(orgId, collectionId);
      if (!current) return { outcome: 'missing' };
      if (totalOf(current.articleCounts) > 0)
        return { outcome: 'not_empty', articleCounts: current.articleCounts };
      await transact(
        present<Write>([
          {
            action: {
              Delete: {
                TableName: tableName,
                Key: keys.kbCollection(orgId, collectionId),
                ConditionExpression: 'rev = :rev AND #d = :zero AND #p = :zero AND #a = :zero',
                ExpressionAttributeNames: {
                  '#d': COUNTER.draft,
                  '#p': COUNTER.published,
                  '#a': COUNTER.archived,
                },
                ExpressionAttributeValues: { ':rev': current.rev, ':zero': 0 },
              },
            },
          },
          { action: { Delete: { TableName: tableName, Key: keys.kbCollectionKey(orgId, current.key) } } },
          totalsWrite(orgId, { collectionBytes: -current.storedBytes }),
        ]),
        { budget },
      );
      return { outcome: 'deleted' };
    });
  },
};

/* ---------------------------------------------------------------- articles */

function articleItem(stored: StoredKbArticle) {
  return {
    ...keys.kbArticle(stored.orgId, stored.id),
    ...keys.kbArticleIndexes(stored),
    entity: 'kbArticle',
    ...stored,
  };
}

export interface ArticleFilter {
  status?: KbArticleStatus | undefined;
  collectionId?: string | undefined;
}

/** Reads index keys newest first until `count` are in hand or the partition ends. */
async function indexKeys(
  partition: { index: string; pk: string },
  count: number,
): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  const pkName = `${partition.index}pk`;
  do {
    const page = await db.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: partition.index,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': pkName },
        ExpressionAttributeValues: { ':pk': partition.pk },
        ProjectionExpression: 'pk, sk',
        ScanIndexForward: false,
        Limit: count - found.length,
        ExclusiveStartKey: startKey,
      }),
    );
    found.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey && found.length < count);
  return found;
}

function partitionOf(orgId: string, filter: ArticleFilter) {
  const { status, collectionId } = filter;
  if (status && collectionId)
    return keys.kbArticleListPartition.collectionStatus(orgId, collectionId, status);
  if (collectionId) return keys.kbArticleListPartition.collection(orgId, collectionId);
  if (status) return keys.kbArticleListPartition.status(orgId, status);
  return undefined;
}

const matches = (article: StoredKbArticle, filter: ArticleFilter) =>
  (filter.status === undefined || article.status === filter.status) &&
  (filter.collectionId === undefined || article.collectionId === filter.collectionId);

/** What the write of `next` over `current` (undefined: a create) changes in the counters. */
function countChanges(current: StoredKbArticle | undefined, next: KbArticleDefinition | undefined) {
  const collections = new Map<string, Partial<ArticleCounts>>();
  const totals: Partial<ArticleCounts> = {};
  const add = (article: KbArticleDefinition, delta: number) => {
    const counts = collections.get(article.collectionId) ?? {};
    counts[article.status] = (counts[article.status] ?? 0) + delta;
    collections.set(article.collectionId, counts);
    totals[article.status] = (totals[article.status] ?? 0) + delta;
  };
  if (current) add(current, -1);
  if (next) add(next, 1);
  return { collections, totals };
}

export const kbArticles = {
  /**
   * One transaction: the article, its slug guard (409), +1 on its collection's counter of its status
   * (the collection must exist: 422 naming `collectionId`) and the totals (bytes, by status).
   */
  async create(definition: KbArticleDefinition): Promise<StoredKbArticle> {
    const storedBytes = sized(definition, 'translations');
    const stored: StoredKbArticle = { ...definition, rev: 1, storedBytes };
    const { orgId } = definition;
    const writes = present<Write>([
      {
        action: {
          Put: {
            TableName: tableName,
            Item: articleItem(stored),
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      },
      {
        action: {
          Put: {
            TableName: tableName,
            Item: {
              ...keys.kbArticleSlug(orgId, definition.slug),
              entity: 'kbArticleSlug',
              articleId: definition.id,
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        onConditionFailed: slugTaken(definition.slug),
      },
      collectionCountsWrite(orgId, definition.collectionId, { [definition.status]: 1 }, true),
      totalsWrite(orgId, { articleBytes: storedBytes, counts: { [definition.status]: 1 } }),
    ]);
    await retryOnConflict((budget) => transact(writes, { budget }));
    return stored;
  },

  /** One strongly consistent GetItem. */
  async get(orgId: string, articleId: string): Promise<StoredKbArticle | undefined> {
    const item = await getItem(keys.kbArticle(orgId, articleId));
    return item ? articleOf(item) : undefined;
  },

  /**
   * Read, change, Put on `rev`, retried when another writer got there first. Moving the article
   * (status or collection) moves its counters in the same transaction: −1 where it was, +1 where it
   * goes (a collection that does not exist is 422 naming `collectionId`); a new slug swaps the
   * guards (409 when taken). `change` returns undefined when nothing changes (nothing is written).
   */
  async update(
    orgId: string,
    articleId: string,
    change: (current: KbArticleDefinition) => KbArticleDefinition | undefined,
  ): Promise<StoredKbArticle | undefined> {
    return retryOnConflict(async (budget) => {
      const current = await kbArticles.get(orgId, articleId);
      if (!current) return undefined;
      const next = change(articleDefinition(current));
      if (!next) return current;
      const storedBytes = sized(next, 'translations');
      const stored: StoredKbArticle = { ...next, rev: current.rev + 1, storedBytes };
      const moved = current.status !== next.status || current.collectionId !== next.collectionId;
      const { collections, totals } = countChanges(current, next);
      const slugMoved = next.slug.toLowerCase() !== current.slug.toLowerCase();
      await transact(
        present<Write>([
          {
            action: {
              Put: {
                TableName: tableName,
                Item: articleItem(stored),
                ConditionExpression: 'rev = :rev',
                ExpressionAttributeValues: { ':rev': current.rev },
              },
            },
          },
          ...(moved
            ? [...collections].map(([collectionId, counts]) =>
                collectionCountsWrite(orgId, collectionId, counts, collectionId === next.collectionId),
              )
            : []),
          ...(slugMoved
            ? [
                {
                  action: {
                    Put: {
                      TableName: tableName,
                      Item: { ...keys.kbArticleSlug(orgId, next.slug), entity: 'kbArticleSlug', articleId },
                      ConditionExpression: 'attribute_not_exists(pk)',
                    },
                  },
                  onConditionFailed: slugTaken(next.slug),
                },
                {
                  action: { Delete: { TableName: tableName, Key: keys.kbArticleSlug(orgId, current.slug) } },
                },
              ]
            : []),
          totalsWrite(orgId, {
            articleBytes: storedBytes - current.storedBytes,
            ...(moved ? { counts: totals } : {}),
          }),
        ]),
        { budget },
      );
      return stored;
    });
  },

  /** Deletes the article and its slug guard, −1 on its collection's and the totals' counters. */
  async remove(orgId: string, articleId: string): Promise<boolean> {
    return retryOnConflict(async (budget) => {
      const current = await kbArticles.get(orgId, articleId);
      if (!current) return false;
      await transact(
        present<Write>([
          {
            action: {
              Delete: {
                TableName: tableName,
                Key: keys.kbArticle(orgId, articleId),
                ConditionExpression: 'rev = :rev',
                ExpressionAttributeValues: { ':rev': current.rev },
              },
            },
          },
          { action: { Delete: { TableName: tableName, Key: keys.kbArticleSlug(orgId, current.slug) } } },
          collectionCountsWrite(orgId, current.collectionId, { [current.status]: -1 }, false),
          totalsWrite(orgId, { articleBytes: -current.storedBytes, counts: { [current.status]: -1 } }),
        ]),
        { budget },
      );
      return true;
    });
  },

  /**
   * The articles `filter` selects, newest first, from position `offset`, at most `limit`. Without a
   * filter: one Query of the partition (`Limit` = offset + limit, full items). With one: its exact
   * index partition (keys only: skipping `offset` entries is cheap), then one BatchGetItem of the
   * page; an article that changed since the index saw it is checked against the filter again.
   */
  async page(
    orgId: string,
    filter: ArticleFilter,
    offset: number,
    limit: number,
  ): Promise<StoredKbArticle[]> {
    const partition = partitionOf(orgId, filter);
    if (!partition) {
      const items = await queryPrefix(keys.kbPartition(orgId), keys.kbArticlePrefix, {
        limit: offset + limit,
        newestFirst: true,
        consistent: true,
      });
      return items.slice(offset).map(articleOf);
    }
    const pageKeys = (await indexKeys(partition, offset + limit)).slice(offset);
    if (pageKeys.length === 0) return [];
    const items = await batchGet(pageKeys, { consistent: true });
    const bySk = new Map(items.map((item) => [String(item.sk), articleOf(item)]));
    return pageKeys.flatMap((key) => {
      const article = bySk.get(String(key.sk));
      return article && matches(article, filter) ? [article] : [];
    });
  },

  /**
   * How many articles `filter` selects, from the counters: the totals item for the organization or a
   * status, the collection's counters for a collection. One GetItem; 0 for a collection not there.
   */
  async count(orgId: string, filter: ArticleFilter): Promise<number> {
    const item = await getItem(
      filter.collectionId ? keys.kbCollection(orgId, filter.collectionId) : keys.kbTotals(orgId),
    );
    if (!item) return 0;
    const counts = countsOf(item);
    return filter.status ? counts[filter.status] : totalOf(counts);
  },

  /**
   * The organization's published articles (of one collection, when given): what search scores.
   * One Query of the knowledge-base partition per 1 MB page, filtered on `status` (and
   * `collectionId`): the whole item is needed to score it, and the status index holds keys only (a
   * second round trip, and BatchGetItem rounds every item up to 4 KB, where a Query rounds once).
   * The drafts and archived articles it reads and drops are what that costs. Bounded by the
   * organization's article budget (MAX_ARTICLE_BYTES).
   */
  async published(
    orgId: string,
    options: { collectionId?: string | undefined } = {},
  ): Promise<StoredKbArticle[]> {
    const found: StoredKbArticle[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await db.send(
        new QueryCommand({
          ...childrenQuery(keys.kbPartition(orgId), keys.kbArticlePrefix, {
            ':published': 'published',
            ...(options.collectionId ? { ':collection': options.collectionId } : {}),
          }),
          FilterExpression: options.collectionId
            ? '#status = :published AND collectionId = :collection'
            : '#status = :published',
          ExpressionAttributeNames: { '#status': 'status' },
          // Newest first, like the list: equal scores keep this order.
          ScanIndexForward: false,
          ExclusiveStartKey: startKey,
        }),
      );
      found.push(...(page.Items ?? []).map(articleOf));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return found;
  },
};
