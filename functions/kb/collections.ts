import { clock } from '../../shared/clock';
import { actorOf } from '../../shared/conversations/actor';
import { kbCollections, totalOf } from '../../shared/db/kb';
import { ConflictError, NotFoundError } from '../../shared/errors';
import { created, ok, route } from '../../shared/http/route';
import { uuidv7 } from '../../shared/ids';
import { collectionOrder, presentCollection } from '../../shared/kb/present';
import { localeResolver } from '../../shared/locale/resolve';
import { pageOf, successResult } from '../../shared/schemas/common';
import {
  createKbCollectionBody,
  getKbItemQuery,
  kbCollection,
  kbCollectionPage,
  kbParams,
  listKbCollectionsQuery,
  updateKbCollectionBody,
} from '../../shared/schemas/kb';
import {
  createKbCollectionExample,
  kbCollectionExample,
  kbCollectionPageExample,
  newKbCollectionExample,
} from '../../shared/schemas/kb-examples';
import { assertValidTranslations, reviseCollectionTranslations, sameExceptUpdatedAt } from './definition';
import { RESOLUTION, TRANSLATION_RULES } from './docs';

const TAG = 'Knowledge base';

const COLLECTION_RULES =
  '`key` (letters, digits, `.`, `_`, `-`; at most 64) is unique in the organization whatever its case: a duplicate is 409 `CONFLICT` with `details.reason = "key_taken"`, also when two writes of one key race. `icon` (≤ 200 characters: an icon name, an emoji or a URL) defaults to empty, `sortOrder` to 0. Each translation has a `name` (≤ 200 characters) and an optional `description` (≤ 1 000; empty when left out), plain text. A collection is at most 300 000 bytes as JSON (422 `details.reason = "too_large"`), and all collections of an organization at most 2 000 000 bytes together (409 `details.reason = "knowledge_base_budget_exceeded"`).';

export const listKbCollections = route({
  method: 'GET',
  path: '/api/kb/collections',
  operationId: 'listKbCollections',
  summary: 'List knowledge-base collections',
  description: `An offset page of the organization’s collections, ordered by \`sortOrder\`, then \`key\`, resolved for \`locale\`. \`articleCount\` is the number of published articles in the collection, kept exact by every article write (publish, unpublish, move, delete) in the same transaction. ${RESOLUTION}`,
  tag: TAG,
  scope: 'knowledge-base:read',
  callers: ['apiKey', 'operator'],
  query: listKbCollectionsQuery,
  response: { status: 200, schema: kbCollectionPage, description: 'A page of collections, resolved' },
  examples: { response: kbCollectionPageExample },
  handle: async ({ caller, organization, query }) => {
    // The locale is checked before anything is read: 422 costs no round trip.
    const resolver = localeResolver(organization, query.locale);
    const all = (await kbCollections.all(caller.orgId)).sort(collectionOrder);
    const page = pageOf(all, query.offset, query.limit);
    return ok({ ...page, data: page.data.map((collection) => presentCollection(collection, resolver)) });
  },
});

export const createKbCollection = route({
  method: 'POST',
  path: '/api/kb/collections',
  operationId: 'createKbCollection',
  summary: 'Create a knowledge-base collection',
  description: [
    COLLECTION_RULES,
    TRANSLATION_RULES,
    `The answer is resolved for the organization’s default locale. ${RESOLUTION}`,
  ].join('\n\n'),
  tag: TAG,
  scope: 'knowledge-base:write',
  callers: ['apiKey', 'operator'],
  body: createKbCollectionBody,
  response: { status: 201, schema: kbCollection, description: 'The new collection, resolved' },
  errors: [409],
  examples: { request: createKbCollectionExample, response: newKbCollectionExample },
  handle: async ({ caller, organization, body }) => {
    assertValidTranslations(organization, body.translations);
    const now = clock.nowIso();
    const stored = await kbCollections.create({
      id: uuidv7(),
      orgId: caller.orgId,
      key: body.key,
      icon: body.icon ?? '',
      sortOrder: body.sortOrder ?? 0,
      translations: reviseCollectionTranslations([], body.translations, {
        now,
        reviewer: actorOf(caller).id,
      }),
      createdAt: now,
      updatedAt: now,
    });
    return created(presentCollection(stored, localeResolver(organization, undefined)));
  },
});

export const getKbCollection = route({
  method: 'GET',
  path: '/api/kb/collections/{id}',
  operationId: 'getKbCollection',
  summary: 'Get a knowledge-base collection',
  description: `One collection, resolved for \`locale\`. An id of another organization is 404. ${RESOLUTION}`,
  tag: TAG,
  scope: 'knowledge-base:read',
  callers: ['apiKey', 'operator'],
  params: kbParams,
  query: getKbItemQuery,
  response: { status: 200, schema: kbCollection, description: 'The collection, resolved' },
  errors: [404],
  examples: { response: kbCollectionExample },
  handle: async ({ caller, organization, params, query }) => {
    const resolver = localeResolver(organization, query.locale);
    const collection = await kbCollections.get(caller.orgId, params.id);
    if (!collection) throw new NotFoundError('Collection not found');
    return ok(presentCollection(collection, resolver));
  },
});

const [english, french] = createKbCollectionExample.translations;

export const updateKbCollection = route({
  method: 'PATCH',
  path: '/api/kb/collections/{id}',
  operationId: 'updateKbCollection',
  summary: 'Update a knowledge-base collection',
  description: [
    'Writes only the fields present: `key`, `icon`, `sortOrder`, `translations` (the whole new set: locales left out are removed). Its articles stay where they are.',
    COLLECTION_RULES,
    TRANSLATION_RULES,
    `A body that changes nothing writes nothing and keeps \`updatedAt\`. The answer is resolved for the organization’s default locale. ${RESOLUTION}`,
  ].join('\n\n'),
  tag: TAG,
  scope: 'knowledge-base:write',
  callers: ['apiKey', 'operator'],
  params: kbParams,
  body: updateKbCollectionBody,
  response: { status: 200, schema: kbCollection, description: 'The collection after the change, resolved' },
  errors: [404, 409],
  examples: {
    // Grace has reviewed the machine translation.
    request: {
      translations: [...(english ? [english] : []), ...(french ? [{ ...french, reviewed: true }] : [])],
    },
    response: kbCollectionExample,
  },
  handle: async ({ caller, organization, params, body }) => {
    assertValidTranslations(organization, body.translations);
    const context = { now: clock.nowIso(), reviewer: actorOf(caller).id };
    const stored = await kbCollections.update(caller.orgId, params.id, (current) => {
      const next = {
        ...current,
        ...(body.key !== undefined ? { key: body.key } : {}),
        ...(body.icon !== undefined ? { icon: body.icon } : {}),
        ...(body.sortOrder !== undefined ? { sortOrder: body.sortOrder } : {}),
        ...(body.translations
          ? { translations: reviseCollectionTranslations(current.translations, body.translations, context) }
          : {}),
      };
      return sameExceptUpdatedAt(current, next) ? undefined : { ...next, updatedAt: context.now };
    });
    if (!stored) throw new NotFoundError('Collection not found');
    return ok(presentCollection(stored, localeResolver(organization, undefined)));
  },
});

export const deleteKbCollection = route({
  method: 'DELETE',
  path: '/api/kb/collections/{id}',
  operationId: 'deleteKbCollection',
  summary: 'Delete a knowledge-base collection',
  description:
    'Only an empty collection can be deleted: while it holds articles of any status (drafts and archived ones included) the answer is 409 `CONFLICT` with `details.reason = "collection_not_empty"` and `details.articles`; move or delete them first. Its key can then be used again.',
  tag: TAG,
  scope: 'knowledge-base:write',
  callers: ['apiKey', 'operator'],
  params: kbParams,
  response: { status: 200, schema: successResult, description: 'Deleted' },
  errors: [404, 409],
  examples: { response: { success: true } },
  handle: async ({ caller, params }) => {
    const removal = await kbCollections.remove(caller.orgId, params.id);
    if (removal.outcome === 'missing') throw new NotFoundError('Collection not found');
    if (removal.outcome === 'not_empty') {
      throw new ConflictError('The collection still holds articles: move or delete them first', {
        reason: 'collection_not_empty',
        articles: totalOf(removal.articleCounts),
      });
    }
    return ok({ success: true });
  },
});
