import type { FixtureContext } from './conversation-scenarios';
import { fixtureApiKey, stringAt } from './fixtures';
import type { Scenario } from './round-trips';

const name = (text: string) => [{ locale: 'en', status: 'published', name: text }];
const texts = (title: string, content: string) => [{ locale: 'en', status: 'published', title, content }];

/** Help-center prose for the search fixtures: a few dozen words each, as real articles start. */
const ARTICLES: [string, string][] = [
  [
    'Reset your password',
    'Open the settings, choose Security and select Reset password. We send a link to your e-mail address; it works for one hour. If it does not arrive, check the spam folder.',
  ],
  [
    'Track your order',
    'Every order confirmation e-mail holds a tracking link. Parcels usually arrive within three working days; the link shows where yours is.',
  ],
  [
    'Refunds',
    'A refund reaches your account within five days of the parcel coming back to us. You receive an e-mail when it is on its way.',
  ],
  [
    'Change your delivery address',
    'Until an order ships you can change its delivery address from the order page. After that, contact us in the chat with the order number.',
  ],
];

/**
 * Scenarios for the knowledge-base routes. A get is one GetItem, a collection list and a search
 * one Query, an unfiltered article list one Query beside the totals' GetItem, a filtered one an
 * index Query beside the counters' GetItem, then one BatchGetItem of the page; creates are one
 * transaction, PATCH and DELETE a GetItem then one transaction. Fixtures (collections and articles
 * to read, change or delete) are written by a fixture API key of the demo organization.
 */
export async function kbScenarios(
  context: Omit<FixtureContext, 'conversationId' | 'nowMs'>,
): Promise<Scenario[]> {
  const { demo, request } = context;
  const apiKey = demo.apiKey;
  const fixtureKey = await fixtureApiKey(context, 'knowledge-base');
  const run = Date.now().toString(36);
  let sequence = 0;
  const handle = (base: string) => `bench-${base}-${run}-${++sequence}`;

  const collectionBody = () => ({
    key: handle('collection'),
    icon: 'book',
    translations: name('Help center'),
  });
  const createCollection = async () =>
    stringAt(
      await request(
        { method: 'POST', path: '/api/kb/collections', token: fixtureKey, body: collectionBody() },
        201,
        'create a knowledge-base collection',
      ),
      'id',
    );
  const collectionId = await createCollection();
  const changedCollectionId = await createCollection();
  const articleBody = (title: string, content: string, status = 'published') => ({
    collectionId,
    slug: handle('article'),
    status,
    translations: texts(title, content),
  });
  const createArticle = async (title: string, content: string, status = 'published') =>
    stringAt(
      await request(
        {
          method: 'POST',
          path: '/api/kb/articles',
          token: fixtureKey,
          body: articleBody(title, content, status),
        },
        201,
        'create a knowledge-base article',
      ),
      'id',
    );
  const articleIds: string[] = [];
  for (const [title, content] of ARTICLES) articleIds.push(await createArticle(title, content));
  await createArticle('Draft: gift cards', 'Gift cards are coming soon.', 'draft');
  const articleId = articleIds[0] ?? '';
  const toggledId = await createArticle('Opening hours', 'We answer in the chat from 8 to 20, every day.');
  let nextSortOrder = 0;
  let published = true;

  return [
    {
      route: 'GET /api/kb/collections',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: '/api/kb/collections?locale=en&limit=20', token: apiKey }),
    },
    {
      route: 'POST /api/kb/collections',
      caller: 'apiKey',
      expectedStatus: 201,
      call: () => ({ method: 'POST', path: '/api/kb/collections', token: apiKey, body: collectionBody() }),
    },
    {
      route: 'GET /api/kb/collections/{id}',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: `/api/kb/collections/${collectionId}?locale=en`, token: apiKey }),
    },
    {
      route: 'PATCH /api/kb/collections/{id}',
      caller: 'apiKey',
      expectedStatus: 200,
      // A real change every time: the order moves.
      call: () => ({
        method: 'PATCH',
        path: `/api/kb/collections/${changedCollectionId}`,
        token: apiKey,
        body: { sortOrder: ++nextSortOrder },
      }),
    },
    {
      route: 'DELETE /api/kb/collections/{id}',
      caller: 'apiKey',
      expectedStatus: 200,
      call: async () => ({
        method: 'DELETE',
        path: `/api/kb/collections/${await createCollection()}`,
        token: apiKey,
      }),
    },
    {
      route: 'GET /api/kb/articles',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'listing',
      call: () => ({ method: 'GET', path: '/api/kb/articles?limit=20', token: apiKey }),
    },
    {
      route: 'GET /api/kb/articles',
      variant: 'status + collectionId',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'listing',
      call: () => ({
        method: 'GET',
        path: `/api/kb/articles?status=published&collectionId=${collectionId}&limit=20`,
        token: apiKey,
      }),
    },
    {
      route: 'GET /api/kb/articles',
      variant: 'q (search)',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({
        method: 'GET',
        path: '/api/kb/articles?q=how%20do%20I%20reset%20my%20password',
        token: apiKey,
      }),
    },
    {
      route: 'POST /api/kb/articles',
      caller: 'apiKey',
      expectedStatus: 201,
      target: 'transaction',
      call: () => ({
        method: 'POST',
        path: '/api/kb/articles',
        token: apiKey,
        body: articleBody('Payment methods', 'We accept cards and bank transfers.'),
      }),
    },
    {
      route: 'GET /api/kb/articles/{id}',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: `/api/kb/articles/${articleId}?locale=en`, token: apiKey }),
    },
    {
      route: 'PATCH /api/kb/articles/{id}',
      variant: 'publish / unpublish',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'transaction',
      // A real change every time: the status flips, and the counters with it.
      call: () => {
        published = !published;
        return {
          method: 'PATCH',
          path: `/api/kb/articles/${toggledId}`,
          token: apiKey,
          body: { status: published ? 'published' : 'draft' },
        };
      },
    },
    {
      route: 'DELETE /api/kb/articles/{id}',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'transaction',
      call: async () => ({
        method: 'DELETE',
        path: `/api/kb/articles/${await createArticle('Doomed', 'To be deleted.')}`,
        token: apiKey,
      }),
    },
  ];
}
