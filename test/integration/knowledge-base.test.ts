import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, createTenant, platformToken, type Tenant } from '../helpers/api';
import { eventuallyIndexed, sameIds } from '../helpers/indexed';

/**
 * The knowledge base through the local gateway: locale resolution of collections and articles,
 * uniqueness races, the published-article counters, pagination, tenancy, search and sanitizing.
 */
type Translation = {
  id: string;
  locale: string;
  status: string;
  reviewedAt: string | null;
  reviewedBy: string | null;
  sourceLocale: string | null;
  machineTranslatedAt: string | null;
};
type Collection = {
  id: string;
  key: string;
  icon: string;
  name: string;
  description: string;
  locale: string;
  fallbackUsed: boolean;
  articleCount: number;
  translations: (Translation & { name: string })[];
};
type Article = {
  id: string;
  collectionId: string;
  slug: string;
  status: string;
  title: string;
  content: string;
  locale: string;
  fallbackUsed: boolean;
  score?: number;
  translations: (Translation & { title: string; content: string })[];
  updatedAt: string;
};
type Page<T> = {
  data: T[];
  pagination: {
    totalItems: number;
    page: number;
    pageSize: number;
    hasNextPage: boolean;
    hasPrevPage: boolean;
  };
};
type ErrorBody = {
  error: { code: string; details?: { field?: string; reason?: string; articles?: number } };
};

const errorOf = (response: ApiResponse<unknown>) => (response.body as ErrorBody).error;

let tenant: Tenant;
let other: Tenant;
let sequence = 0;
const unique = (base: string) => `${base}-${++sequence}-${Date.now().toString(36)}`;

const named = (locale: string, name: string, status = 'published') => ({ locale, status, name });
const text = (locale: string, title: string, content: string, status = 'published') => ({
  locale,
  status,
  title,
  content,
});

const createCollection = (body: Record<string, unknown>, token = tenant.apiKey) =>
  call<Collection>('POST', '/api/kb/collections', { token, body });

async function collection(
  overrides: Record<string, unknown> = {},
  token = tenant.apiKey,
): Promise<Collection> {
  const created = await createCollection(
    { key: unique('col'), translations: [named('en', 'Help')], ...overrides },
    token,
  );
  if (created.status !== 201) throw new Error(`create collection: ${created.status} ${created.text}`);
  return created.body;
}

const createArticle = (body: Record<string, unknown>, token = tenant.apiKey) =>
  call<Article>('POST', '/api/kb/articles', { token, body });

async function article(
  collectionId: string,
  overrides: Record<string, unknown> = {},
  token = tenant.apiKey,
): Promise<Article> {
  const created = await createArticle(
    {
      collectionId,
      slug: unique('article'),
      status: 'published',
      translations: [text('en', 'A title', 'Some content')],
      ...overrides,
    },
    token,
  );
  if (created.status !== 201) throw new Error(`create article: ${created.status} ${created.text}`);
  return created.body;
}

const getCollection = (id: string, query = '', token = tenant.apiKey) =>
  call<Collection>('GET', `/api/kb/collections/${id}${query}`, { token });
const getArticle = (id: string, query = '', token = tenant.apiKey) =>
  call<Article>('GET', `/api/kb/articles/${id}${query}`, { token });
const patchArticle = (id: string, body: Record<string, unknown>, token = tenant.apiKey) =>
  call<Article>('PATCH', `/api/kb/articles/${id}`, { token, body });
const listArticles = (query: string, token = tenant.apiKey) =>
  call<Page<Article>>('GET', `/api/kb/articles?${query}`, { token });
const countOf = async (collectionId: string) => (await getCollection(collectionId)).body.articleCount;

beforeAll(async () => {
  tenant = await createTenant();
  const enabled = await call('PATCH', `/api/admin/organizations/${tenant.orgId}`, {
    token: platformToken(),
    body: { locales: ['en', 'fr', 'de'], defaultLocale: 'en' },
  });
  expect(enabled.status, enabled.text).toBe(200);
  other = await createTenant();
});

describe('locale resolution', () => {
  it('resolves collections: the requested locale, else the default, else the first published; drafts never answer', async () => {
    const created = await createCollection({
      key: unique('shipping'),
      icon: 'truck',
      translations: [
        { ...named('en', 'Shipping'), description: 'Parcels and delivery' },
        { ...named('fr', 'Livraison'), description: 'Colis et livraison', sourceLocale: 'en' },
        named('de', 'Versand', 'draft'),
      ],
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      icon: 'truck',
      name: 'Shipping',
      description: 'Parcels and delivery',
      locale: 'en',
      fallbackUsed: false,
      articleCount: 0,
    });
    expect(
      created.body.translations.map((entry) => [entry.locale, entry.status, entry.sourceLocale]),
    ).toEqual([
      ['en', 'published', null],
      ['fr', 'published', 'en'],
      ['de', 'draft', null],
    ]);
    const id = created.body.id;
    expect((await getCollection(id, '?locale=fr')).body).toMatchObject({
      name: 'Livraison',
      locale: 'fr',
      fallbackUsed: false,
    });
    // German is only a draft: the default locale answers.
    expect((await getCollection(id, '?locale=de')).body).toMatchObject({
      name: 'Shipping',
      locale: 'en',
      fallbackUsed: true,
    });
    const listed = await call<Page<Collection>>('GET', '/api/kb/collections?locale=fr&limit=100', {
      token: tenant.operatorSession,
    });
    expect(listed.status).toBe(200);
    expect(listed.body.data.find((entry) => entry.id === id)).toMatchObject({
      name: 'Livraison',
      locale: 'fr',
    });

    // Neither the requested nor the default locale published: the first published one, in stored order.
    const frenchOnly = await collection({
      translations: [named('en', 'Billing', 'draft'), named('fr', 'Facturation'), named('de', 'Rechnung')],
    });
    expect(frenchOnly).toMatchObject({
      name: 'Facturation',
      locale: 'fr',
      fallbackUsed: true,
      description: '',
    });
  });

  it('resolves articles and answers the complete translation set, drafts included', async () => {
    const home = await collection();
    const created = await article(home.id, {
      translations: [
        text('en', 'Track your order', 'Follow the tracking link.'),
        text('fr', 'Suivre votre commande', 'Suivez le lien de suivi.'),
        text('de', 'Bestellung verfolgen', 'Folgen Sie dem Link.', 'draft'),
      ],
    });
    const french = await getArticle(created.id, '?locale=fr');
    expect(french.body).toMatchObject({
      title: 'Suivre votre commande',
      content: 'Suivez le lien de suivi.',
      locale: 'fr',
      fallbackUsed: false,
    });
    expect(french.body.translations.map((entry) => [entry.locale, entry.status, entry.title])).toEqual([
      ['en', 'published', 'Track your order'],
      ['fr', 'published', 'Suivre votre commande'],
      ['de', 'draft', 'Bestellung verfolgen'],
    ]);
    expect((await getArticle(created.id, '?locale=de')).body).toMatchObject({
      title: 'Track your order',
      locale: 'en',
      fallbackUsed: true,
    });
    // A listing by collection reads an index: it may show the new article up to 2 s later.
    const listed = await eventuallyIndexed(
      () => listArticles(`collectionId=${home.id}&locale=fr`),
      (answer) => answer.body.data[0]?.id === created.id,
    );
    expect(listed.body.data[0]).toMatchObject({
      id: created.id,
      title: 'Suivre votre commande',
      locale: 'fr',
    });
    expect(listed.body.data[0]?.translations).toHaveLength(3);
  });

  it('refuses a locale the organization has not enabled: 422 naming it', async () => {
    const home = await collection();
    const created = await article(home.id);
    for (const path of [
      '/api/kb/collections?locale=es',
      `/api/kb/collections/${home.id}?locale=es`,
      `/api/kb/articles/${created.id}?locale=es`,
      '/api/kb/articles?locale=es',
      '/api/kb/articles?locale=es&q=title',
    ]) {
      const refused = await call('GET', path, { token: tenant.apiKey });
      expect(refused.status, path).toBe(422);
      expect(errorOf(refused).details?.field, path).toBe('locale');
    }
    const spanish = await createArticle({
      collectionId: home.id,
      slug: unique('es'),
      translations: [text('en', 'Order', 'Text'), text('es', 'Pedido', 'Texto')],
    });
    expect(spanish.status).toBe(422);
    expect(errorOf(spanish).details?.field).toBe('translations.1.locale');
  });

  it('accepts a set of drafts only, work in progress: reads answer the key or slug until one is published', async () => {
    const key = unique('drafts');
    const draftsOnly = await createCollection({
      key,
      translations: [named('en', 'Work in progress', 'draft')],
    });
    expect(draftsOnly.status).toBe(201);
    expect(draftsOnly.body).toMatchObject({ name: key, description: '', fallbackUsed: true });
    const slug = unique('draft-article');
    const draft = await createArticle({
      collectionId: draftsOnly.body.id,
      slug,
      status: 'draft',
      translations: [text('en', 'Unfinished title', 'Unfinished text', 'draft')],
    });
    expect(draft.status).toBe(201);
    expect(draft.body).toMatchObject({ title: slug, content: '', fallbackUsed: true });
    expect(draft.body.translations).toMatchObject([
      { locale: 'en', status: 'draft', title: 'Unfinished title' },
    ]);
  });

  it('records the translation lifecycle: reviews are stamped by the server and last while the text does', async () => {
    const home = await collection();
    const created = await article(home.id, {
      translations: [
        text('en', 'Refunds', 'Refunds take 5 days.'),
        {
          ...text('fr', 'Remboursements', 'Cinq jours.'),
          sourceLocale: 'en',
          machineTranslatedAt: '2026-10-20T08:05:00.000Z',
        },
      ],
    });
    const french = created.translations[1];
    expect(french).toMatchObject({
      sourceLocale: 'en',
      machineTranslatedAt: '2026-10-20T08:05:00.000Z',
      reviewedAt: null,
    });
    const reviewed = await patchArticle(
      created.id,
      {
        translations: [
          text('en', 'Refunds', 'Refunds take 5 days.'),
          { ...text('fr', 'Remboursements', 'Cinq jours.'), reviewed: true },
        ],
      },
      tenant.operatorSession,
    );
    expect(reviewed.status, reviewed.text).toBe(200);
    expect(reviewed.body.translations[1]).toMatchObject({
      id: french?.id,
      reviewedBy: tenant.operatorId,
      sourceLocale: 'en',
    });
    expect(reviewed.body.translations[1]?.reviewedAt).not.toBeNull();
    // The text changes without a new review: the review goes.
    const edited = await patchArticle(created.id, {
      translations: [
        text('en', 'Refunds', 'Refunds take 5 days.'),
        text('fr', 'Remboursements', 'Sept jours.'),
      ],
    });
    expect(edited.body.translations[1]).toMatchObject({ reviewedAt: null, reviewedBy: null });
  });
});

describe('uniqueness', () => {
  it('keeps slugs unique in the organization: of two creates racing, one is 201 and the other 409', async () => {
    const home = await collection();
    const slug = unique('raced');
    const body = {
      collectionId: home.id,
      slug,
      status: 'published',
      translations: [text('en', 'Raced', 'Body')],
    };
    const results = await Promise.all([createArticle(body), createArticle(body, tenant.adminSession)]);
    expect(results.map((result) => result.status).sort()).toEqual([201, 409]);
    const loser = results.find((result) => result.status === 409);
    expect(loser && errorOf(loser)).toMatchObject({ code: 'CONFLICT', details: { reason: 'slug_taken' } });
    // The loser counted nothing.
    expect(await countOf(home.id)).toBe(1);
    // Whatever the case; also when a PATCH takes it.
    expect((await createArticle({ ...body, slug: slug.toUpperCase() })).status).toBe(409);
    const second = await article(home.id);
    const taken = await patchArticle(second.id, { slug });
    expect(taken.status).toBe(409);
    expect(errorOf(taken).details?.reason).toBe('slug_taken');
    // Another organization has its own slugs.
    const theirs = await collection({}, other.apiKey);
    expect((await createArticle({ ...body, collectionId: theirs.id }, other.apiKey)).status).toBe(201);
    // A slug changed or deleted is free again.
    const winner = results.find((result) => result.status === 201)?.body.id ?? '';
    expect((await patchArticle(winner, { slug: unique('renamed') })).status).toBe(200);
    const reused = await createArticle(body);
    expect(reused.status, reused.text).toBe(201);
    expect(
      (await call('DELETE', `/api/kb/articles/${reused.body.id}`, { token: tenant.apiKey })).status,
    ).toBe(200);
    expect((await createArticle(body)).status).toBe(201);
  });

  it('keeps collection keys unique, races included', async () => {
    const key = unique('faq');
    const body = { key, translations: [named('en', 'FAQ')] };
    const results = await Promise.all([
      createCollection(body),
      createCollection(body, tenant.operatorSession),
    ]);
    expect(results.map((result) => result.status).sort()).toEqual([201, 409]);
    const loser = results.find((result) => result.status === 409);
    expect(loser && errorOf(loser).details?.reason).toBe('key_taken');
    expect((await createCollection({ ...body, key: key.toUpperCase() })).status).toBe(409);
    expect((await createCollection(body, other.apiKey)).status).toBe(201);
  });
});

describe('articleCount', () => {
  it('counts published articles exactly through publish, unpublish, move, archive and delete', async () => {
    const a = await collection();
    const b = await collection();
    const draft = await article(a.id, { status: 'draft' });
    expect(await countOf(a.id)).toBe(0);
    expect((await patchArticle(draft.id, { status: 'published' })).status).toBe(200);
    expect(await countOf(a.id)).toBe(1);
    const second = await article(a.id);
    expect(await countOf(a.id)).toBe(2);
    // Move: one leaves a, arrives in b.
    const moved = await patchArticle(second.id, { collectionId: b.id });
    expect(moved.body).toMatchObject({ collectionId: b.id, status: 'published' });
    expect([await countOf(a.id), await countOf(b.id)]).toEqual([1, 1]);
    // Move and unpublish at once.
    expect((await patchArticle(draft.id, { collectionId: b.id, status: 'draft' })).status).toBe(200);
    expect([await countOf(a.id), await countOf(b.id)]).toEqual([0, 1]);
    expect((await patchArticle(second.id, { status: 'archived' })).status).toBe(200);
    expect(await countOf(b.id)).toBe(0);
    expect((await patchArticle(second.id, { status: 'published' })).status).toBe(200);
    expect(await countOf(b.id)).toBe(1);
    // A PATCH that changes nothing, or only the text, moves nothing.
    expect((await patchArticle(second.id, { status: 'published' })).status).toBe(200);
    expect(
      (await patchArticle(second.id, { translations: [text('en', 'Renamed', 'New text')] })).status,
    ).toBe(200);
    expect(await countOf(b.id)).toBe(1);
    expect((await call('DELETE', `/api/kb/articles/${second.id}`, { token: tenant.apiKey })).status).toBe(
      200,
    );
    expect(await countOf(b.id)).toBe(0);
    // The list's totals come from the same counters: b still holds the draft (its page, read
    // through an index, may show the moves up to 2 s later; the totals at once).
    const inB = await eventuallyIndexed(
      () => listArticles(`collectionId=${b.id}`),
      (answer) =>
        sameIds(
          answer.body.data.map((entry) => entry.id),
          [draft.id],
        ),
    );
    expect(inB.body.pagination.totalItems).toBe(1);
    expect(inB.body.data.map((entry) => entry.id)).toEqual([draft.id]);
  });

  it('stays exact when many articles are published at once', async () => {
    const home = await collection();
    const drafts = await Promise.all(Array.from({ length: 6 }, () => article(home.id, { status: 'draft' })));
    const published = await Promise.all(
      drafts.map((entry) => patchArticle(entry.id, { status: 'published' })),
    );
    expect(published.map((result) => result.status)).toEqual(drafts.map(() => 200));
    expect(await countOf(home.id)).toBe(6);
    const listed = await eventuallyIndexed(
      () => listArticles(`collectionId=${home.id}&status=published&limit=100`),
      (answer) => answer.body.data.length === 6,
    );
    expect(listed.body.pagination.totalItems).toBe(6);
    expect(listed.body.data).toHaveLength(6);
  });

  it('refuses a move or a create into a collection that is not there: 422 naming collectionId', async () => {
    const home = await collection();
    const entry = await article(home.id);
    const theirs = await collection({}, other.apiKey);
    for (const collectionId of [theirs.id, '00000000-0000-7000-8000-000000000000']) {
      const refused = await patchArticle(entry.id, { collectionId });
      expect(refused.status).toBe(422);
      expect(errorOf(refused).details?.field).toBe('collectionId');
      const created = await createArticle({
        collectionId,
        slug: unique('nowhere'),
        translations: [text('en', 'T', 'C')],
      });
      expect(created.status).toBe(422);
      expect(errorOf(created).details?.field).toBe('collectionId');
    }
    const malformed = await createArticle({
      collectionId: 'nope',
      slug: unique('x'),
      translations: [text('en', 'T', 'C')],
    });
    expect(malformed.status).toBe(422);
    expect(errorOf(malformed).details?.field).toBe('collectionId');
    expect(await countOf(home.id)).toBe(1);
  });
});

describe('collections', () => {
  it('refuses to delete a collection while it holds articles (drafts too): 409', async () => {
    const home = await collection();
    const entry = await article(home.id, { status: 'draft' });
    const refused = await call('DELETE', `/api/kb/collections/${home.id}`, { token: tenant.apiKey });
    expect(refused.status).toBe(409);
    expect(errorOf(refused)).toMatchObject({
      code: 'CONFLICT',
      details: { reason: 'collection_not_empty', articles: 1 },
    });
    expect((await call('DELETE', `/api/kb/articles/${entry.id}`, { token: tenant.apiKey })).status).toBe(200);
    expect((await call('DELETE', `/api/kb/collections/${home.id}`, { token: tenant.apiKey })).status).toBe(
      200,
    );
    expect((await getCollection(home.id)).status).toBe(404);
    expect((await call('DELETE', `/api/kb/collections/${home.id}`, { token: tenant.apiKey })).status).toBe(
      404,
    );
    // Its key is free again.
    expect((await createCollection({ key: home.key, translations: [named('en', 'Again')] })).status).toBe(
      201,
    );
  });

  it('PATCH changes key, icon, order and names; the counters stay', async () => {
    const home = await collection({ translations: [named('en', 'Old')] });
    await article(home.id);
    const key = unique('renamed');
    const patched = await call<Collection>('PATCH', `/api/kb/collections/${home.id}`, {
      token: tenant.operatorSession,
      body: { key, icon: '📦', sortOrder: -5, translations: [named('en', 'New'), named('fr', 'Nouveau')] },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ key, icon: '📦', name: 'New', articleCount: 1 });
    // The old key is free, the new one taken.
    expect((await createCollection({ key: home.key, translations: [named('en', 'Old')] })).status).toBe(201);
    expect((await createCollection({ key, translations: [named('en', 'Dup')] })).status).toBe(409);
    const unknown = await call('PATCH', `/api/kb/collections/${home.id}`, {
      token: tenant.apiKey,
      body: { articleCount: 9 },
    });
    expect(unknown.status).toBe(422);
    expect(errorOf(unknown).details?.field).toBe('articleCount');
  });
});

describe('pagination', () => {
  it('pages articles by offset, newest first, with totals from the counters', async () => {
    const home = await collection();
    const created: Article[] = [];
    for (let i = 0; i < 5; i++)
      created.push(await article(home.id, { status: i % 2 === 0 ? 'published' : 'draft' }));
    const newestFirst = created.map((entry) => entry.id).reverse();

    // Filtered pages read an index (up to 2 s behind the writes); the totals come from the counters.
    const page = await eventuallyIndexed(
      () => listArticles(`collectionId=${home.id}&offset=2&limit=2`),
      (answer) =>
        sameIds(
          answer.body.data.map((entry) => entry.id),
          newestFirst.slice(2, 4),
        ),
    );
    expect(page.status).toBe(200);
    expect(page.body.data.map((entry) => entry.id)).toEqual(newestFirst.slice(2, 4));
    expect(page.body.pagination).toEqual({
      totalItems: 5,
      page: 2,
      pageSize: 2,
      hasNextPage: true,
      hasPrevPage: true,
    });
    const offsetThree = await eventuallyIndexed(
      () => listArticles(`collectionId=${home.id}&offset=3&limit=2`),
      (answer) =>
        sameIds(
          answer.body.data.map((entry) => entry.id),
          newestFirst.slice(3),
        ),
    );
    expect(offsetThree.body.pagination).toMatchObject({ page: 2, hasNextPage: false });
    expect(offsetThree.body.data.map((entry) => entry.id)).toEqual(newestFirst.slice(3));

    const drafts = await eventuallyIndexed(
      () => listArticles(`collectionId=${home.id}&status=draft`),
      (answer) =>
        sameIds(
          answer.body.data.map((entry) => entry.id),
          [created[3]?.id, created[1]?.id],
        ),
    );
    expect(drafts.body.data.map((entry) => entry.id)).toEqual([created[3]?.id, created[1]?.id]);
    expect(drafts.body.pagination.totalItems).toBe(2);

    const past = await listArticles(`collectionId=${home.id}&offset=10`);
    expect(past.body.data).toEqual([]);
    expect(past.body.pagination).toMatchObject({
      totalItems: 5,
      page: 1,
      hasNextPage: false,
      hasPrevPage: true,
    });

    for (const query of [
      'limit=101',
      'limit=0',
      'offset=-1',
      'status=deleted',
      'collectionId=abc',
      'sort=title',
    ]) {
      const refused = await listArticles(query);
      expect(refused.status, query).toBe(422);
    }
    expect((await call('GET', '/api/kb/collections?limit=101', { token: tenant.apiKey })).status).toBe(422);
  });

  it('pages the whole organization and by status across collections', async () => {
    const fresh = await createTenant();
    const [a, b] = [await collection({}, fresh.apiKey), await collection({}, fresh.apiKey)];
    const first = await article(a.id, {}, fresh.apiKey);
    const second = await article(b.id, { status: 'archived' }, fresh.apiKey);
    const third = await article(b.id, {}, fresh.apiKey);
    const all = await listArticles('limit=2', fresh.apiKey);
    expect(all.body.data.map((entry) => entry.id)).toEqual([third.id, second.id]);
    expect(all.body.pagination).toMatchObject({ totalItems: 3, hasNextPage: true });
    const published = await eventuallyIndexed(
      () => listArticles('status=published', fresh.apiKey),
      (answer) =>
        sameIds(
          answer.body.data.map((entry) => entry.id),
          [third.id, first.id],
        ),
    );
    expect(published.body.data.map((entry) => entry.id)).toEqual([third.id, first.id]);
    expect(published.body.pagination.totalItems).toBe(2);

    const collections = await call<Page<Collection>>('GET', '/api/kb/collections?offset=1&limit=1', {
      token: fresh.apiKey,
    });
    expect(collections.body.pagination).toEqual({
      totalItems: 2,
      page: 2,
      pageSize: 1,
      hasNextPage: false,
      hasPrevPage: true,
    });
  });
});

describe('tenancy', () => {
  it('answers 404 for ids of another organization and never lists them', async () => {
    const theirCollection = await collection({}, other.apiKey);
    const theirArticle = await article(theirCollection.id, {}, other.apiKey);
    for (const [method, path, body] of [
      ['GET', `/api/kb/collections/${theirCollection.id}`, undefined],
      ['PATCH', `/api/kb/collections/${theirCollection.id}`, { sortOrder: 1 }],
      ['DELETE', `/api/kb/collections/${theirCollection.id}`, undefined],
      ['GET', `/api/kb/articles/${theirArticle.id}`, undefined],
      ['PATCH', `/api/kb/articles/${theirArticle.id}`, { status: 'draft' }],
      ['DELETE', `/api/kb/articles/${theirArticle.id}`, undefined],
    ] as const) {
      expect((await call(method, path, { token: tenant.apiKey, body })).status, `${method} ${path}`).toBe(
        404,
      );
    }
    const listed = await listArticles(`collectionId=${theirCollection.id}`);
    expect(listed.body).toMatchObject({ data: [], pagination: { totalItems: 0 } });
    const searched = await listArticles('q=title&limit=100');
    expect(searched.body.data.some((entry) => entry.id === theirArticle.id)).toBe(false);
    // Still theirs, untouched.
    expect((await getArticle(theirArticle.id, '', other.apiKey)).body.status).toBe('published');
    expect((await getCollection(theirCollection.id, '', other.apiKey)).body.articleCount).toBe(1);
  });
});

describe('search', () => {
  it('ranks published articles by relevance, best first, with a score', async () => {
    const fresh = await createTenant();
    const home = await collection({}, fresh.apiKey);
    const elsewhere = await collection({}, fresh.apiKey);
    const reset = await article(
      home.id,
      {
        translations: [
          text('en', 'Reset your password', 'Open settings, choose Security, then reset the password.'),
        ],
      },
      fresh.apiKey,
    );
    const billing = await article(
      home.id,
      {
        translations: [
          text('en', 'Invoices', 'Invoices are in the billing page. We never e-mail a password.'),
        ],
      },
      fresh.apiKey,
    );
    await article(
      home.id,
      { translations: [text('en', 'Track your order', 'Follow the tracking link in the e-mail.')] },
      fresh.apiKey,
    );
    const draft = await article(
      home.id,
      {
        status: 'draft',
        translations: [text('en', 'Password reset policy', 'Reset password reset password.')],
      },
      fresh.apiKey,
    );
    const moved = await article(
      elsewhere.id,
      { translations: [text('en', 'Passwords for teams', 'Each member resets their own passwords.')] },
      fresh.apiKey,
    );

    const found = await listArticles('q=How%20do%20I%20reset%20my%20PASSWORD%3F', fresh.apiKey);
    expect(found.status, found.text).toBe(200);
    const foundIds = found.body.data.map((entry) => entry.id);
    expect(foundIds[0]).toBe(reset.id);
    expect(foundIds).toContain(billing.id);
    expect(foundIds).toContain(moved.id);
    expect(foundIds).not.toContain(draft.id);
    expect(found.body.pagination.totalItems).toBe(3);
    const scores = found.body.data.map((entry) => entry.score ?? -1);
    expect(scores.every((score) => score > 0 && score <= 1)).toBe(true);
    expect([...scores].sort((x, y) => y - x)).toEqual(scores);

    // Narrowed to one collection; paged.
    const inHome = await listArticles(`q=password&collectionId=${home.id}&limit=1`, fresh.apiKey);
    expect(inHome.body.data.map((entry) => entry.id)).toEqual([reset.id]);
    expect(inHome.body.pagination).toMatchObject({ totalItems: 2, hasNextPage: true });

    // Published a moment ago: found at once; unpublished: gone.
    expect((await patchArticle(draft.id, { status: 'published' }, fresh.apiKey)).status).toBe(200);
    expect((await listArticles('q=reset%20password', fresh.apiKey)).body.data[0]?.id).toBe(draft.id);
    expect((await patchArticle(draft.id, { status: 'archived' }, fresh.apiKey)).status).toBe(200);
    expect((await listArticles('q=policy', fresh.apiKey)).body.data).toEqual([]);

    // Without a score outside search; search of drafts is refused.
    expect((await listArticles('status=published', fresh.apiKey)).body.data[0]?.score).toBeUndefined();
    const refused = await listArticles('q=password&status=draft', fresh.apiKey);
    expect(refused.status).toBe(422);
    expect(errorOf(refused).details?.field).toBe('status');
  });

  it('searches each article in its resolved locale, accents and case folded', async () => {
    const home = await collection();
    const created = await article(home.id, {
      translations: [
        text('en', 'Delivery times', 'Parcels arrive in three days.'),
        text('fr', 'Délais de livraison', 'Les colis arrivent en trois jours ouvrés.'),
      ],
    });
    const french = await listArticles('q=DELAIS%20livraison&locale=fr&limit=100');
    expect(french.body.data[0]).toMatchObject({ id: created.id, title: 'Délais de livraison', locale: 'fr' });
    // German: nothing published, so the article is read (and found) in the default locale.
    const german = await listArticles('q=parcels%20arrive&locale=de&limit=100');
    expect(german.body.data[0]).toMatchObject({ id: created.id, locale: 'en', fallbackUsed: true });
  });
});

describe('content', () => {
  it('sanitizes article texts like messages, and refuses one left empty', async () => {
    const home = await collection();
    const created = await article(home.id, {
      translations: [
        text(
          'en',
          'Safe <b>title</b>',
          'Hello <script>alert(1)</script><img src=x onerror=alert(2)><a href="javascript:x">world</a>',
        ),
      ],
    });
    expect(created).toMatchObject({ title: 'Safe title', content: 'Hello world' });
    expect(created.translations[0]).toMatchObject({ title: 'Safe title', content: 'Hello world' });
    expect((await getArticle(created.id)).body.content).toBe('Hello world');
    const empty = await createArticle({
      collectionId: home.id,
      slug: unique('empty'),
      translations: [text('en', 'Title', '<script>only()</script>')],
    });
    expect(empty.status).toBe(422);
    expect(errorOf(empty).details?.field).toBe('translations.0.content');
    const patched = await patchArticle(created.id, {
      translations: [text('en', '<style>x</style>', 'Body')],
    });
    expect(patched.status).toBe(422);
    expect(errorOf(patched).details?.field).toBe('translations.0.title');
  });
});
