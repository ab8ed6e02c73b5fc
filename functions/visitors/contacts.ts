import { contacts } from '../../shared/db/contacts';
import { NotFoundError } from '../../shared/errors';
import { etagOf, ifMatchVersion } from '../../shared/http/if-match';
import { ok, reply, route } from '../../shared/http/route';
import { idParams } from '../../shared/schemas/common';
import { cursorExample, visitorProfileExample } from '../../shared/schemas/examples';
import { lazily } from '../../shared/schemas/names';
import {
  externalIdText,
  patchVisitorBody,
  upsertVisitorBody,
  visitorListQuery,
  visitorPage,
  visitorProfile,
} from '../../shared/schemas/visitor';
import * as z from '../../shared/schemas/zod';

const utc = (instant: string | undefined) =>
  instant === undefined ? undefined : new Date(instant).toISOString();

export const listVisitors = route({
  method: 'GET',
  path: '/api/visitors',
  operationId: 'listVisitors',
  summary: 'List visitors (contacts)',
  description: [
    'A cursor page of the organization’s visitors, newest `lastSeenAt` first (`limit` default 20, at most 100). `email` (any case), `externalId` and `identifier` filter by exact value and combine. Merged visitors are left out of this order.',
    '',
    'With `updatedSince` (an instant) the page is for incremental sync: visitors whose `updatedAt` ≥ the instant, oldest `updatedAt` first, merged and erased ones included with `mergedInto` / `erasedAt` set, as `{ data, nextCursor, done }`: at the current end `done` is true and `nextCursor` stays a string to poll with later. The cursor resumes exactly after the last change served: a visitor is served again only if it changed again. Changes appear about one second after they commit. Any `updatedSince`, however old, is allowed (a full resync).',
  ].join('\n'),
  tag: 'Visitors',
  scope: 'visitors:read',
  callers: ['apiKey', 'operator'],
  query: visitorListQuery,
  response: { status: 200, schema: visitorPage, description: 'A page of visitors' },
  errors: [400],
  examples: { response: { data: [visitorProfileExample], nextCursor: cursorExample } },
  handle: async ({ caller, query }) =>
    ok(await contacts.list(caller.orgId, { ...query, updatedSince: utc(query.updatedSince) })),
});

export const getVisitor = route({
  method: 'GET',
  path: '/api/visitors/{id}',
  operationId: 'getVisitor',
  summary: 'Get a visitor',
  description:
    'The visitor with its profile; `ETag` carries its `version`. A merged visitor shows `mergedInto`, an erased one `erasedAt`.',
  tag: 'Visitors',
  scope: 'visitors:read',
  callers: ['apiKey', 'operator'],
  params: idParams,
  versioned: 'read',
  response: { status: 200, schema: visitorProfile, description: 'The visitor' },
  errors: [404],
  examples: { response: visitorProfileExample },
  handle: async ({ caller, params }) => {
    const visitor = await contacts.profile(caller.orgId, params.id);
    if (!visitor) throw new NotFoundError('Visitor not found');
    return ok(visitor, { ETag: etagOf(visitor.version) });
  },
});

export const updateVisitor = route({
  method: 'PATCH',
  path: '/api/visitors/{id}',
  operationId: 'updateVisitor',
  summary: 'Update a visitor',
  description:
    'Any of `name`, `email` (a valid address), `phone` (E.164, format only), `externalId` (null removes it) and `metadata` (merged key by key; a null value removes a key); null clears a field. An `externalId` another visitor has is 409. A change increments `version` (`ETag`); with `If-Match`, another current version is 412 with `details.currentVersion`. A body that changes nothing returns the visitor as it is. A merged or erased visitor is 409. Writes `visitor.updated`.',
  tag: 'Visitors',
  scope: 'visitors:write',
  callers: ['apiKey', 'operator'],
  params: idParams,
  body: patchVisitorBody,
  versioned: 'write',
  response: { status: 200, schema: visitorProfile, description: 'The visitor after the change' },
  errors: [404, 409],
  examples: { request: { name: 'Ada Lovelace', phone: '+442071234567' }, response: visitorProfileExample },
  handle: async ({ caller, params, body, headers }) => {
    const visitor = await contacts.patch(caller.orgId, params.id, body, ifMatchVersion(headers));
    return ok(visitor, { ETag: etagOf(visitor.version) });
  },
});

export const upsertVisitor = route({
  method: 'PUT',
  path: '/api/visitors/by-external-id/{externalId}',
  operationId: 'upsertVisitorByExternalId',
  summary: 'Create or update a visitor by external id',
  description:
    'Creates the visitor with this `externalId` (201), or updates the one that has it (200): `identifier`, `name`, `email`, `phone` (null clears) and `metadata` (merged key by key). Concurrent upserts of one `externalId` create exactly one visitor. Writes `visitor.created` or `visitor.updated` (none when nothing changes).',
  tag: 'Visitors',
  scope: 'visitors:write',
  callers: ['apiKey', 'operator'],
  params: lazily(() => z.strictObject({ externalId: externalIdText })),
  body: upsertVisitorBody,
  versioned: 'read',
  response: { status: 200, schema: visitorProfile, description: 'The visitor, updated' },
  alternative: {
    status: 201,
    schema: visitorProfile,
    description: 'The visitor, created',
    example: { ...visitorProfileExample, version: 1, conversationCount: 0 },
  },
  examples: { request: { name: 'Ada Lovelace', email: 'ada@example.com' }, response: visitorProfileExample },
  handle: async ({ caller, params, body }) => {
    const { created, visitor } = await contacts.upsert(caller.orgId, params.externalId, body);
    return reply(created ? 201 : 200, visitor, { ETag: etagOf(visitor.version) });
  },
});
