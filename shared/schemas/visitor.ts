import { isoInstant, plainText, uuid } from './common';
import { metadataObject } from './free-json';
import { named } from './names';
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
