import { clock } from '../clock';
import { visitorProfileProjection } from '../schemas/projections';
import type { VisitorProfile } from '../schemas/visitor';
import { keys } from './keys';
import { project } from './project';

/**
 * Visitors as contacts: the visitor item (`ORG#o#VISITOR#v`) with its profile, written whole on
 * `rev`, its listing entries (keys.visitorIndexes) and the external-id guard, in one transaction
 * with the visitor's event. `conversationCount` is counted when read (the visitor's gsi4 entries),
 * so a conversation write never touches the visitor.
 */
export type StoredVisitor = Omit<VisitorProfile, 'conversationCount'> & { rev: number };

export function storedVisitorOf(item: Record<string, unknown>): StoredVisitor {
  const lastSeenAt = String(item.lastSeenAt);
  return {
    id: String(item.id),
    identifier: String(item.identifier ?? ''),
    fingerprint: (item.fingerprint as string | null | undefined) ?? null,
    geoCountry: (item.geoCountry as string | null | undefined) ?? null,
    geoCity: (item.geoCity as string | null | undefined) ?? null,
    totalSessions: Number(item.totalSessions ?? 1),
    firstSeenAt: String(item.firstSeenAt),
    lastSeenAt,
    metadata: (item.metadata as Record<string, unknown> | undefined) ?? {},
    externalId: (item.externalId as string | null | undefined) ?? null,
    name: (item.name as string | null | undefined) ?? null,
    email: (item.email as string | null | undefined) ?? null,
    phone: (item.phone as string | null | undefined) ?? null,
    // Visitors written before contacts existed: their last sighting is their last change.
    updatedAt: String(item.updatedAt ?? lastSeenAt),
    version: Number(item.version ?? 1),
    mergedInto: (item.mergedInto as string | null | undefined) ?? null,
    erasedAt: (item.erasedAt as string | null | undefined) ?? null,
    rev: Number(item.rev ?? 0),
  };
}

/** The stored item: every listing key follows from the state. */
export function visitorItem(orgId: string, visitor: StoredVisitor) {
  return {
    ...keys.visitor(orgId, visitor.id),
    ...keys.visitorIndexes({ orgId, ...visitor }),
    entity: 'visitor',
    ...visitor,
  };
}

/** A fresh visitor's state (widget bootstrap, upsert). */
export function newStoredVisitor(fields: Partial<StoredVisitor> & { id: string }): StoredVisitor {
  const now = clock.nowIso();
  return {
    identifier: fields.id,
    fingerprint: null,
    geoCountry: null,
    geoCity: null,
    totalSessions: 1,
    firstSeenAt: now,
    lastSeenAt: now,
    metadata: {},
    externalId: null,
    name: null,
    email: null,
    phone: null,
    updatedAt: now,
    version: 1,
    mergedInto: null,
    erasedAt: null,
    rev: 1,
    ...fields,
  };
}

const { rev: _rev, ...profileFields } = newStoredVisitor({ id: '' });
export const PROFILE_FIELDS = Object.keys(profileFields) as (keyof Omit<StoredVisitor, 'rev'>)[];

const toProfile = project<VisitorProfile>(visitorProfileProjection);

/** The visitor as the API shows it, with its live conversations counted (`rev` stays behind). */
export function profileOf(visitor: StoredVisitor, conversationCount: number): VisitorProfile {
  return toProfile({ ...visitor, conversationCount });
}

/** The organization and visitor a visitor item's `pk` names (stream records); undefined for another key. */
export const visitorKeyOwner = (pk: string) => keys.parseVisitorPartition(pk);
