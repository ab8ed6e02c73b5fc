import { examplePage, ids } from './examples';
import type { KbArticle, KbArticleListItem, KbCollection } from './kb';

/**
 * The knowledge base the API description shows: the help center Ada could have read before asking
 * where her order is. Typed by the response schemas and validated by a test, like examples.ts.
 */
export const kbIds = {
  collection: '019a7c1d-1a00-7b11-8c22-6e33f44a5501',
  collectionEn: '019a7c1d-1a00-7b12-9d33-7f44a55b6602',
  collectionFr: '019a7c1d-1a00-7b13-8e44-8a55b66c7703',
  article: '019a7c1d-2b00-7c21-9f55-9b66c77d8804',
  articleEn: '019a7c1d-2b00-7c22-8a66-0c77d88e9905',
  articleFr: '019a7c1d-2b00-7c23-9b77-1d88e99fa006',
} as const;

const createdAt = '2026-10-20T08:00:00.000Z';
const reviewedAt = '2026-10-21T14:00:00.000Z';

const lifecycle = {
  sourceLocale: null,
  machineTranslatedAt: null,
  reviewedAt: null,
  reviewedBy: null,
  createdAt,
  updatedAt: createdAt,
};

/** Machine-translated from English, then reviewed by Grace. */
const machineTranslated = {
  sourceLocale: 'en',
  machineTranslatedAt: '2026-10-20T08:05:00.000Z',
  reviewedAt,
  reviewedBy: ids.operator,
  createdAt,
  updatedAt: reviewedAt,
};

export const kbCollectionExample: KbCollection = {
  id: kbIds.collection,
  orgId: ids.organization,
  key: 'shipping',
  icon: 'truck',
  sortOrder: 10,
  name: 'Shipping and delivery',
  description: 'Where your parcel is, and what to do when it is late',
  locale: 'en',
  fallbackUsed: false,
  articleCount: 1,
  translations: [
    {
      id: kbIds.collectionEn,
      locale: 'en',
      status: 'published',
      name: 'Shipping and delivery',
      description: 'Where your parcel is, and what to do when it is late',
      ...lifecycle,
    },
    {
      id: kbIds.collectionFr,
      locale: 'fr',
      status: 'published',
      name: 'Expédition et livraison',
      description: 'Où est votre colis, et que faire en cas de retard',
      ...machineTranslated,
    },
  ],
  createdAt,
  updatedAt: reviewedAt,
};

export const createKbCollectionExample = {
  key: 'shipping',
  icon: 'truck',
  sortOrder: 10,
  translations: [
    {
      locale: 'en',
      status: 'published' as const,
      name: 'Shipping and delivery',
      description: 'Where your parcel is, and what to do when it is late',
    },
    {
      locale: 'fr',
      status: 'published' as const,
      name: 'Expédition et livraison',
      description: 'Où est votre colis, et que faire en cas de retard',
      sourceLocale: 'en',
      machineTranslatedAt: '2026-10-20T08:05:00.000Z',
    },
  ],
};

/** As its creation answered it: nothing reviewed yet, no article yet. */
export const newKbCollectionExample: KbCollection = {
  ...kbCollectionExample,
  articleCount: 0,
  translations: kbCollectionExample.translations.map((translation) =>
    translation.reviewedAt
      ? { ...translation, reviewedAt: null, reviewedBy: null, updatedAt: createdAt }
      : translation,
  ),
  updatedAt: createdAt,
};

export const kbCollectionPageExample = examplePage(kbCollectionExample);

const trackContentEn =
  'Open the e-mail that confirmed your order and follow the tracking link. A parcel usually arrives within 3 working days; if it is late, reply in the chat with your order number.';

export const kbArticleExample: KbArticle = {
  id: kbIds.article,
  orgId: ids.organization,
  collectionId: kbIds.collection,
  slug: 'track-your-order',
  status: 'published',
  title: 'Track your order',
  content: trackContentEn,
  locale: 'en',
  fallbackUsed: false,
  translations: [
    {
      id: kbIds.articleEn,
      locale: 'en',
      status: 'published',
      title: 'Track your order',
      content: trackContentEn,
      ...lifecycle,
    },
    {
      id: kbIds.articleFr,
      locale: 'fr',
      status: 'draft',
      title: 'Suivre votre commande',
      content:
        'Ouvrez l’e-mail de confirmation de votre commande et suivez le lien de suivi. Un colis arrive en général sous 3 jours ouvrés.',
      ...lifecycle,
      sourceLocale: 'en',
      machineTranslatedAt: '2026-10-20T08:05:00.000Z',
    },
  ],
  createdAt,
  updatedAt: createdAt,
};

export const createKbArticleExample = {
  collectionId: kbIds.collection,
  slug: 'track-your-order',
  status: 'published' as const,
  translations: [
    { locale: 'en', status: 'published' as const, title: 'Track your order', content: trackContentEn },
    {
      locale: 'fr',
      status: 'draft' as const,
      title: 'Suivre votre commande',
      content:
        'Ouvrez l’e-mail de confirmation de votre commande et suivez le lien de suivi. Un colis arrive en général sous 3 jours ouvrés.',
      sourceLocale: 'en',
      machineTranslatedAt: '2026-10-20T08:05:00.000Z',
    },
  ],
};

/** A search (`?q=where is my parcel&locale=fr`): the French draft does not answer, English does. */
export const kbSearchPageExample = examplePage<KbArticleListItem>({
  ...kbArticleExample,
  fallbackUsed: true,
  score: 0.4712,
});
