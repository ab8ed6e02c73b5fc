import { GetCommand, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import { ConflictError, NotFoundError, PreconditionFailedError } from '../errors';
import { uuidv7 } from '../ids';
import type { VisitorProfile } from '../schemas/visitor';
import { batchGet } from './batch';
import { db, tableName } from './client';
import { decodeCursor, encodeCursor } from './cursor';
import { eventWrite } from './events';
import { keys } from './keys';
import { syncPage } from './sync';
import { backoff, ConcurrentChangeError, RetryBudget, transact, type Write } from './transaction';
import {
  newStoredVisitor,
  PROFILE_FIELDS,
  profileOf,
  type StoredVisitor,
  storedVisitorOf,
} from './visitor-record';
import { conversationCountOf, getStored, guardWrites, visitorPut } from './visitor-store';

/** Rounds of an upsert that keeps meeting a creation racing it (each then reads the winner). */
const MAX_UPSERT_ROUNDS = 10;

async function profilesOf(orgId: string, stored: readonly StoredVisitor[]): Promise<VisitorProfile[]> {
  const counts = await Promise.all(stored.map((visitor) => conversationCountOf(orgId, visitor.id)));
  return stored.map((visitor, i) => profileOf(visitor, counts[i] ?? 0));
}

function mergeMetadata(current: Record<string, unknown>, patch: Record<string, unknown>) {
  const merged = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

export interface VisitorChanges {
  identifier?: string | undefined;
  name?: string | null | undefined;
  email?: string | null | undefined;
  phone?: string | null | undefined;
  externalId?: string | null | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** The visitor after the changes, or undefined when they change nothing (no new version). */
function applied(current: StoredVisitor, changes: VisitorChanges): StoredVisitor | undefined {
  const next: StoredVisitor = { ...current };
  if (changes.identifier !== undefined) next.identifier = changes.identifier;
  if (changes.name !== undefined) next.name = changes.name;
  if (changes.email !== undefined) next.email = changes.email;
  if (changes.phone !== undefined) next.phone = changes.phone;
  if (changes.externalId !== undefined) next.externalId = changes.externalId;
  if (changes.metadata !== undefined) next.metadata = mergeMetadata(current.metadata, changes.metadata);
  const same = PROFILE_FIELDS.every(
    (field) => JSON.stringify(next[field]) === JSON.stringify(current[field]),
  );
  if (same) return undefined;
  return { ...next, updatedAt: clock.nowIso(), version: current.version + 1, rev: current.rev + 1 };
}

class LostRace extends Error {}

/** One transaction: the visitor, its guard changes, its event and any other writes; a lost `rev` race is LostRace. */
async function commit(
  orgId: string,
  before: StoredVisitor | undefined,
  after: StoredVisitor,
  extra: Write[],
) {
  const writes: Write[] = [
    { action: visitorPut(orgId, before, after), onConditionFailed: () => new LostRace() },
    ...guardWrites(orgId, before, after),
    ...extra,
  ];
  // A failed condition without its own error is a lost `rev` race too (transact's ConcurrentChangeError).
  try {
    await transact(writes);
  } catch (error) {
    if (error instanceof ConcurrentChangeError) throw new LostRace();
    throw error;
  }
}

/** Reads, applies and commits until the write wins its `rev` race (within the request's retry budget). */
async function changeVisitor(
  orgId: string,
  visitorId: string,
  change: (current: StoredVisitor) => StoredVisitor | undefined,
  extra: (current: StoredVisitor, next: StoredVisitor) => Write[] = () => [],
): Promise<{ visitor: StoredVisitor; changed: boolean }> {
  const budget = new RetryBudget();
  for (let attempt = 1; ; attempt++) {
    const current = await getStored(orgId, visitorId);
    if (!current) throw new NotFoundError('Visitor not found');
    const next = change(current);
    if (!next) return { visitor: current, changed: false };
    try {
      const count = await conversationCountOf(orgId, visitorId);
      await commit(orgId, current, next, [
        eventWrite(orgId, 'visitor.updated', profileOf(next, count)),
        ...extra(current, next),
      ]);
      return { visitor: next, changed: true };
    } catch (error) {
      if (!(error instanceof LostRace) || !(await budget.pause(attempt))) throw error;
    }
  }
}

interface Page<T> {
  data: T[];
  nextCursor: string | null;
  done?: boolean;
}

export interface VisitorListQuery {
  cursor?: string | undefined;
  limit: number;
  email?: string | undefined;
  externalId?: string | undefined;
  identifier?: string | undefined;
  updatedSince?: string | undefined;
}

const matches = (visitor: StoredVisitor, query: VisitorListQuery) =>
  (query.email === undefined || visitor.email?.toLowerCase() === query.email.toLowerCase()) &&
  (query.externalId === undefined || visitor.externalId === query.externalId) &&
  (query.identifier === undefined || visitor.identifier === query.identifier);

/** Reads the visitors an index page names, by key, in the page's order; filtered by every filter. */
async function visitorsNamed(entries: Record<string, unknown>[], query: VisitorListQuery) {
  const items = await batchGet(
    entries.map((entry) => ({ pk: entry.pk, sk: entry.sk })),
    { consistent: false },
  );
  const byPk = new Map(items.map((item) => [String(item.pk), storedVisitorOf(item)]));
  return entries.flatMap((entry) => {
    const visitor = byPk.get(String(entry.pk));
    return visitor && matches(visitor, query) ? [visitor] : [];
  });
}

/**
 * The profiles of a page of index entries. The entries' keys name the visitors, so their
 * conversations are counted (a COUNT Query each) while the visitors are read (one BatchGetItem):
 * one round trip for both after the page's Query.
 */
async function profilesOfEntries(
  orgId: string,
  entries: Record<string, unknown>[],
  query: VisitorListQuery,
): Promise<VisitorProfile[]> {
  const ids = entries.map((entry) => keys.visitorIdOf(orgId, String(entry.pk)));
  const [visitors, counts] = await Promise.all([
    visitorsNamed(entries, query),
    Promise.all(ids.map((visitorId) => conversationCountOf(orgId, visitorId))),
  ]);
  const countOf = new Map(ids.map((visitorId, i) => [visitorId, counts[i] ?? 0]));
  return visitors.map((visitor) => profileOf(visitor, countOf.get(visitor.id) ?? 0));
}

export const contacts = {
  get: getStored,

  async profile(orgId: string, visitorId: string): Promise<VisitorProfile | undefined> {
    const [stored, count] = await Promise.all([
      getStored(orgId, visitorId),
      conversationCountOf(orgId, visitorId),
    ]);
    return stored ? profileOf(stored, count) : undefined;
  },

  /**
   * PATCH: the changes on the version `ifMatch` names (412 otherwise); a taken external id is 409.
   * A body that changes nothing answers the visitor as it is.
   */
  async patch(orgId: string, visitorId: string, changes: VisitorChanges, ifMatch: number | undefined) {
    const { visitor } = await changeVisitor(orgId, visitorId, (current) => {
      if (ifMatch !== undefined && ifMatch !== current.version)
        throw new PreconditionFailedError(current.version);
      if (current.erasedAt !== null || current.mergedInto !== null)
        throw new ConflictError(
          current.erasedAt !== null ? 'The visitor was erased' : 'The visitor was merged into another',
          { field: 'id' },
        );
      return applied(current, changes);
    });
    return profileOf(visitor, await conversationCountOf(orgId, visitorId));
  },

  /**
   * PUT by external id: creates the visitor with its guard in one transaction (the guard's
   * `attribute_not_exists` makes concurrent creators of one external id lose to the first), or
   * updates the visitor the guard names. `created` tells which.
   */
  async upsert(orgId: string, externalId: string, changes: Omit<VisitorChanges, 'externalId'>) {
    for (let attempt = 1; ; attempt++) {
      const { Item: guard } = await db.send(
        new GetCommand({
          TableName: tableName,
          Key: keys.visitorExternalId(orgId, externalId),
          ConsistentRead: true,
        }),
      );
      if (guard) {
        try {
          const { visitor } = await changeVisitor(orgId, String(guard.visitorId), (current) => {
            if (current.externalId !== externalId) throw new LostRace();
            return applied(current, changes);
          });
          return {
            created: false,
            visitor: profileOf(visitor, await conversationCountOf(orgId, visitor.id)),
          };
        } catch (error) {
          // The guard moved to another visitor meanwhile (a PATCH changed the external id): read it again.
          if (!(error instanceof LostRace || error instanceof NotFoundError) || attempt >= MAX_UPSERT_ROUNDS)
            throw error;
          await backoff(attempt);
          continue;
        }
      }
      const id = uuidv7();
      const fresh = newStoredVisitor({
        id,
        externalId,
        ...(changes.identifier !== undefined ? { identifier: changes.identifier } : {}),
        name: changes.name ?? null,
        email: changes.email ?? null,
        phone: changes.phone ?? null,
        metadata: mergeMetadata({}, changes.metadata ?? {}),
      });
      try {
        await commit(orgId, undefined, fresh, [eventWrite(orgId, 'visitor.created', profileOf(fresh, 0))]);
        return { created: true, visitor: profileOf(fresh, 0) };
      } catch (error) {
        // Another upsert of this external id created it first (or is creating it): update that one
        // instead. Not contention on one item, so not bounded by the request's retry budget.
        if (!(error instanceof ConflictError || error instanceof LostRace) || attempt >= MAX_UPSERT_ROUNDS)
          throw error;
        await backoff(attempt);
      }
    }
  },

  /**
   * A listing page: newest `lastSeenAt` first, or with `updatedSince` oldest `updatedAt` first
   * (`{ data, nextCursor, done }`, the cursor resuming after the last change served).
   */
  async list(orgId: string, query: VisitorListQuery): Promise<Page<VisitorProfile>> {
    if (query.updatedSince !== undefined) return contacts.sync(orgId, query);
    const filters = { email: query.email, externalId: query.externalId, identifier: query.identifier };
    const queryId = `visitors:${JSON.stringify(filters)}`;
    if (query.externalId !== undefined) {
      // At most one visitor: the guard names it.
      if (query.cursor) decodeCursor(query.cursor, orgId, queryId);
      const { Item: guard } = await db.send(
        new GetCommand({ TableName: tableName, Key: keys.visitorExternalId(orgId, query.externalId) }),
      );
      const visitor = guard ? await getStored(orgId, String(guard.visitorId)) : undefined;
      const found = visitor && !query.cursor && matches(visitor, query) ? [visitor] : [];
      return { data: await profilesOf(orgId, found), nextCursor: null };
    }
    const partition =
      query.email !== undefined
        ? keys.visitorListPartition.email(orgId, query.email)
        : query.identifier !== undefined
          ? keys.visitorListPartition.identifier(orgId, query.identifier)
          : keys.visitorListPartition.all(orgId);
    const n = partition.index.slice(-1);
    const input: QueryCommandInput = {
      TableName: tableName,
      IndexName: partition.index,
      KeyConditionExpression: `gsi${n}pk = :pk`,
      ExpressionAttributeValues: { ':pk': partition.pk },
      ScanIndexForward: false,
      Limit: query.limit + 1,
      ExclusiveStartKey: query.cursor ? decodeCursor(query.cursor, orgId, queryId) : undefined,
    };
    const { Items = [] } = await db.send(new QueryCommand(input));
    const page = Items.slice(0, query.limit);
    const last = page.at(-1);
    const nextCursor =
      Items.length > query.limit && last
        ? encodeCursor(orgId, queryId, {
            pk: last.pk,
            sk: last.sk,
            [`gsi${n}pk`]: last[`gsi${n}pk`],
            [`gsi${n}sk`]: last[`gsi${n}sk`],
          })
        : null;
    return { data: await profilesOfEntries(orgId, page, query), nextCursor };
  },

  /** Incremental sync: gsi2 from `updatedSince` (or after the cursor) up to the settled end. */
  async sync(orgId: string, query: VisitorListQuery): Promise<Page<VisitorProfile>> {
    const filters = { email: query.email, externalId: query.externalId, identifier: query.identifier };
    const result = await syncPage(orgId, `visitors-sync:${JSON.stringify(filters)}`, {
      partitions: [keys.visitorListPartition.updated(orgId)],
      since: query.updatedSince ?? '',
      cursor: query.cursor,
      limit: query.limit,
    });
    return {
      data: await profilesOfEntries(orgId, result.entries, query),
      nextCursor: result.nextCursor,
      done: result.done,
    };
  },
};
