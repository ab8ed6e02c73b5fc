import { cursorParam, isoInstant, pageLimit, plainText, uuid } from './common';
import { metadataObject } from './free-json';
import { built, documented, lazily, named } from './names';
import * as z from './zod';

export const visitor = named('Visitor', () =>
  z.object({
    id: uuid,
    identifier: z.string(),
    fingerprint: z.nullable(z.string()),
    geoCountry: z.nullable(z.string()),
    geoCity: z.nullable(z.string()),
    totalSessions: z.int(),
    firstSeenAt: isoInstant,
    lastSeenAt: isoInstant,
    metadata: z.record(z.string(), z.unknown()),
  }),
);
export type Visitor = z.infer<typeof visitor>;

export const createVisitorBody = named('CreateVisitorRequest', () =>
  z.strictObject({
    identifier: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(320), plainText())),
    fingerprint: z.optional(z.string().check(z.minLength(1), z.maxLength(200), plainText())),
    metadata: z.optional(metadataObject),
  }),
);

export const visitorBootstrap = named('VisitorBootstrap', () =>
  z.object({ visitor, token: z.string(), expiresAt: isoInstant }),
);

/** E.164: a plus, then up to 15 digits, the first not 0 (format only: no numbering-plan check). */
export const E164 = /^\+[1-9]\d{1,14}$/;

/** The visitor as a contact (`/api/visitors`): the embedded visitor, plus its profile and lifecycle. */
export const visitorProfile = named(
  'VisitorProfile',
  () =>
    z.object({
      ...built(visitor).shape,
      /** Unique in the organization: the integrator's own id for this person. */
      externalId: z.nullable(z.string()),
      name: z.nullable(z.string()),
      email: z.nullable(z.string()),
      phone: z.nullable(z.string()),
      conversationCount: documented(z.int(), {
        description:
          'Live (not deleted) conversations of the visitor, counted through an index: one started or deleted in the last 2 s may not show yet (a merge’s own answer counts the conversations it moved)',
      }),
      updatedAt: isoInstant,
      /** Increments with every change: sent as `ETag`, compared with `If-Match`. */
      version: z.int(),
      /** Set on a visitor merged into another: the target's id. */
      mergedInto: z.nullable(uuid),
      /** Set once the visitor's personal data is erased. */
      erasedAt: z.nullable(isoInstant),
    }),
  'A visitor as a contact: profile, external id and lifecycle markers (merged, erased)',
);
export type VisitorProfile = z.infer<typeof visitorProfile>;

const nameText = lazily(() => z.string().check(z.trim(), z.minLength(1), z.maxLength(200), plainText()));
const emailText = lazily(() => z.email().check(z.maxLength(320)));
const phoneText = lazily(() =>
  z.string().check(z.maxLength(16), z.regex(E164, 'Expected an E.164 number such as +14155550123')),
);
export const externalIdText = lazily(() => z.string().check(z.minLength(1), z.maxLength(255), plainText()));

export const patchVisitorBody = named('UpdateVisitorRequest', () =>
  z.strictObject({
    name: z.optional(z.nullable(nameText)),
    email: z.optional(z.nullable(emailText)),
    phone: z.optional(z.nullable(phoneText)),
    externalId: z.optional(z.nullable(externalIdText)),
    /** Merged key by key; a null value removes the key. */
    metadata: z.optional(metadataObject),
  }),
);

export const upsertVisitorBody = named('UpsertVisitorRequest', () =>
  z.strictObject({
    identifier: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(320), plainText())),
    name: z.optional(z.nullable(nameText)),
    email: z.optional(z.nullable(emailText)),
    phone: z.optional(z.nullable(phoneText)),
    /** Merged key by key; a null value removes the key. */
    metadata: z.optional(metadataObject),
  }),
);

export const mergeVisitorBody = named('MergeVisitorRequest', () => z.strictObject({ sourceVisitorId: uuid }));

export const visitorListQuery = lazily(() =>
  z.strictObject({
    cursor: z.optional(cursorParam),
    limit: pageLimit(20, 100),
    email: z.optional(z.string().check(z.minLength(1), z.maxLength(320), plainText())),
    externalId: z.optional(externalIdText),
    identifier: z.optional(z.string().check(z.minLength(1), z.maxLength(320), plainText())),
    updatedSince: z.optional(z.iso.datetime({ offset: true })),
  }),
);

export const visitorPage = named('VisitorPage', () =>
  z.object({
    data: z.array(visitorProfile),
    nextCursor: z.nullable(z.string()),
    /** Only with `updatedSince`: true when the page reached the current end (poll later with `nextCursor`). */
    done: z.optional(z.boolean()),
  }),
);
