import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Conversation, ListConversationsQuery } from '../schemas/conversation';
import { conversationStatuses } from '../schemas/conversation-statuses';
import { batchGet } from './batch';
import { db, tableName } from './client';
import { toConversation } from './conversations';
import { decodeCursor, encodeCursor, malformedCursor } from './cursor';
import { type Key, keys } from './keys';
import { LISTING_SHARDS, shardOf } from './shards';
import { syncPage } from './sync';

type Item = Record<string, unknown>;

/** Query pages one partition may read while a sparse filter finds too few matches. */
const MAX_QUERY_PAGES = 10;
/** A visitor's listing reads all their conversations' index entries (~250 B each): 5 pages is ~20,000. */
const MAX_VISITOR_PAGES = 5;

/** The filters of a listing, checked on index entries and again on the items read by key. */
function matches(query: ListConversationsQuery, entry: Item, since: string | undefined): boolean {
  if (query.status !== undefined && entry.status !== undefined && entry.status !== query.status) return false;
  if (
    query.operatorId !== undefined &&
    entry.operatorId !== undefined &&
    entry.operatorId !== query.operatorId
  )
    return false;
  if (query.visitorId !== undefined && entry.visitorId !== undefined && entry.visitorId !== query.visitorId)
    return false;
  if (query.priority !== undefined && entry.priority !== query.priority) return false;
  if (query.tag !== undefined && !(Array.isArray(entry.tags) && entry.tags.includes(query.tag))) return false;
  if (since !== undefined && typeof entry.lastMessageAt === 'string' && entry.lastMessageAt < since)
    return false;
  return true;
}

/** The table key of an index entry (what the page's BatchGetItem asks for). */
const tableKey = (entry: Item): Key => ({ pk: String(entry.pk), sk: String(entry.sk) });

interface Partition {
  index: 'gsi2' | 'gsi3';
  pk: string;
}

interface PartitionRead {
  partition: Partition;
  /** Entries that match, newest first: at most `limit + 1`. */
  found: Item[];
  /**
   * The sort key down to which this partition was read (every match at or above it is in `found`);
   * undefined when read to its end.
   */
  readTo: string | undefined;
}

/**
 * Newest first from one partition of a recency index (`<lastMessageAt>#<id>`), below `before` (the
 * last sort key served), until `limit + 1` entries match: with that many from every partition, the
 * merged page is exact.
 */
async function readPartition(
  partition: Partition,
  before: string | undefined,
  query: ListConversationsQuery,
  cutoff: string | undefined,
): Promise<PartitionRead> {
  const since = cutoff || undefined;
  // The history window moves on while a client pages: a cursor from before the cutoff has nothing
  // left to read (and BETWEEN refuses a lower bound above its upper one).
  if (before !== undefined && since !== undefined && before <= since)
    return { partition, found: [], readTo: undefined };
  const skName = `${partition.index}sk`;
  // A status partition needs no status filter: only priority and tag drop entries there.
  const filtered = Boolean(query.priority || query.tag || (query.status && partition.index === 'gsi3'));
  // A key condition takes one comparison of the sort key: with both bounds BETWEEN, which keeps
  // `before` itself (the entry served last), dropped below.
  const range =
    before !== undefined && since !== undefined
      ? ' AND #sk BETWEEN :since AND :before'
      : before !== undefined
        ? ' AND #sk < :before'
        : since !== undefined
          ? ' AND #sk >= :since'
          : '';
  const found: Item[] = [];
  let startKey: Item | undefined;
  for (let page = 0; page < MAX_QUERY_PAGES; page++) {
    const result = await db.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: partition.index,
        KeyConditionExpression: `#pk = :pk${range}`,
        ExpressionAttributeNames: { '#pk': `${partition.index}pk`, ...(range ? { '#sk': skName } : {}) },
        ExpressionAttributeValues: {
          ':pk': partition.pk,
          ...(since !== undefined ? { ':since': since } : {}),
          ...(before !== undefined ? { ':before': before } : {}),
        },
        ScanIndexForward: false,
        Limit: filtered ? Math.max(50, query.limit * 2) : query.limit + 1,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const entry of result.Items ?? []) {
      if (entry[skName] === before || !matches(query, entry, undefined)) continue;
      found.push(entry);
      if (found.length > query.limit) return { partition, found, readTo: String(entry[skName]) };
    }
    startKey = result.LastEvaluatedKey;
    if (!startKey) return { partition, found, readTo: undefined };
  }
  return { partition, found, readTo: String(startKey?.[skName]) };
}

/** The status partition (gsi2) a conversation item belongs in now. */
const statusPartition = (orgId: string, item: Item): string =>
  keys.conversationListPartition.status(orgId, String(item.status), shardOf(String(item.id), LISTING_SHARDS))
    .pk;

/**
 * One page of a listing sorted by recency over several partitions (the shards of each status, or of
 * an operator), read in parallel and merged, and the sort key the next page starts below (null at
 * the end). Every partition resumes below the same key: no position per partition to carry.
 */
async function recentPage(
  partitions: readonly Partition[],
  before: string | undefined,
  query: ListConversationsQuery,
  since: string | undefined,
): Promise<{ page: Item[]; next: string | null }> {
  const reads = await Promise.all(
    partitions.map((partition) => readPartition(partition, before, query, since)),
  );
  // Below the highest point some partition stopped reading at, that partition may hold a newer
  // match than what the others found: the page ends there, and the next one starts there.
  const horizon = reads
    .flatMap((read) => (read.readTo === undefined ? [] : [read.readTo]))
    .reduce<string | undefined>((high, key) => (high === undefined || key > high ? key : high), undefined);
  const candidates = reads
    .flatMap((read) =>
      read.found.map((entry) => ({ entry, recency: String(entry[`${read.partition.index}sk`]) })),
    )
    .sort((a, b) => (a.recency < b.recency ? 1 : a.recency > b.recency ? -1 : 0));
  // While an index lags, a conversation whose status just changed can sit in two status
  // partitions at once (the new entry already there, the old one not yet removed). Its entries
  // count once toward the page, and all of them at or above the page's end are passed;
  // `listConversations` shows the one its item says is current.
  const taken: typeof candidates = [];
  const counted = new Set<string>();
  let full = false;
  for (const candidate of candidates) {
    if (horizon !== undefined && candidate.recency < horizon) break;
    const id = String(candidate.entry.pk);
    if (!counted.has(id)) {
      if (counted.size === query.limit) {
        full = true;
        break;
      }
      counted.add(id);
    }
    taken.push(candidate);
  }
  const last = taken.at(-1);
  // Every candidate at or above the horizon was taken when the page did not fill: nothing between
  // the last one and the horizon matches, so the next page starts below the horizon.
  const next = full && last ? last.recency : (horizon ?? null);
  return { page: taken.map((candidate) => candidate.entry), next };
}

/** Entries of a visitor's listing read by key at a time while item filters look for matches. */
const VISITOR_CHUNK = 100;

/** Filters only the items answer in a visitor's listing: its entries hold `lastMessageAt` alone. */
const filtersItems = (query: ListConversationsQuery): boolean =>
  query.status !== undefined ||
  query.operatorId !== undefined ||
  query.priority !== undefined ||
  query.tag !== undefined;

/**
 * One page of a visitor's conversations, as items: the index holds them by creation (their entry
 * does not move with every message) with `lastMessageAt` only, so all of the visitor's entries are
 * read and sorted by it, then read by key in that order. Without status, operator, priority or tag
 * filters the page's entries are the page (one BatchGetItem, as any listing); with them, chunks of
 * entries are read until `limit + 1` items match. The entry holds nothing else so that a status,
 * priority, tag or assignment change rewrites no entry of this index.
 */
async function visitorPage(
  orgId: string,
  visitorId: string,
  after: [string, string] | undefined,
  query: ListConversationsQuery,
  since: string | undefined,
): Promise<{ items: Item[]; next: [string, string] | null }> {
  const partition = keys.conversationListPartition.visitor(orgId, visitorId);
  const entries: Item[] = [];
  let startKey: Item | undefined;
  for (let page = 0; page < MAX_VISITOR_PAGES; page++) {
    const result = await db.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: partition.index,
        KeyConditionExpression: 'gsi4pk = :pk',
        ExpressionAttributeValues: { ':pk': partition.pk },
        ExclusiveStartKey: startKey,
      }),
    );
    entries.push(...(result.Items ?? []));
    startKey = result.LastEvaluatedKey;
    if (!startKey) break;
  }
  const position = (entry: Item): [string, string] => [String(entry.lastMessageAt), String(entry.gsi4sk)];
  const newerFirst = (a: [string, string], b: [string, string]) =>
    a[0] === b[0] ? (a[1] < b[1] ? 1 : a[1] > b[1] ? -1 : 0) : a[0] < b[0] ? 1 : -1;
  // The entries answer the history window only; the other filters are checked on the items.
  const ordered = entries
    .filter((entry) => since === undefined || !(String(entry.lastMessageAt) < since))
    .filter((entry) => !after || newerFirst(position(entry), after) > 0)
    .sort((a, b) => newerFirst(position(a), position(b)));
  const readInOrder = async (chunk: Item[]) => {
    const items = chunk.length ? await batchGet(chunk.map(tableKey), { consistent: false }) : [];
    const byKey = new Map(items.map((item) => [`${item.pk}|${item.sk}`, item]));
    return chunk.flatMap((entry) => {
      const item = byKey.get(`${entry.pk}|${entry.sk}`);
      return item && !item.deletedAt && matches(query, item, since) ? [{ entry, item }] : [];
    });
  };
  if (!filtersItems(query)) {
    const page = ordered.slice(0, query.limit);
    const last = page.at(-1);
    const found = await readInOrder(page);
    return {
      items: found.map(({ item }) => item),
      next: ordered.length > query.limit && last ? position(last) : null,
    };
  }
  const found: { entry: Item; item: Item }[] = [];
  for (let start = 0; start < ordered.length && found.length <= query.limit; start += VISITOR_CHUNK)
    found.push(...(await readInOrder(ordered.slice(start, start + VISITOR_CHUNK))));
  const page = found.slice(0, query.limit);
  const last = page.at(-1);
  return {
    items: page.map(({ item }) => item),
    next: found.length > query.limit && last ? position(last.entry) : null,
  };
}

/**
 * What a cursor of this listing holds: the last sort key served (`<lastMessageAt>#<id>`), below
 * which every partition resumes, or a visitor listing's last position.
 */
interface ListingCursor {
  before?: string;
  a?: [string, string];
}

/**
 * A page of `GET /api/conversations`, in a module of its own: the cursor it signs needs the key
 * ring, which is read from Secrets Manager at init (shared/cursor-keys.ts), and only the functions
 * that list conversations should load that client and make that read.
 *
 * Newest `lastMessageAt` first. The most selective index names candidates (keys and the filtered
 * attributes only); the page's conversations are then read by key in one BatchGetItem and checked
 * against the filters again (an index trails the table by a moment). Two round trips.
 */
export async function listConversations(
  orgId: string,
  query: ListConversationsQuery,
  since: string | undefined,
): Promise<{ data: Conversation[]; nextCursor: string | null }> {
  const queryId = JSON.stringify([
    'conversations',
    query.status,
    query.operatorId,
    query.visitorId,
    query.priority,
    query.tag,
  ]);
  const cursor = query.cursor ? (decodeCursor(query.cursor, orgId, queryId) as ListingCursor) : undefined;
  const encode = (next: ListingCursor | null) =>
    next ? encodeCursor(orgId, queryId, next as Record<string, unknown>) : null;
  if (query.visitorId) {
    if (cursor && !Array.isArray(cursor.a)) throw malformedCursor();
    const read = await visitorPage(orgId, query.visitorId, cursor?.a, query, since);
    return { data: read.items.map(toConversation), nextCursor: encode(read.next ? { a: read.next } : null) };
  }
  if (cursor && typeof cursor.before !== 'string') throw malformedCursor();
  const listing = keys.conversationListPartition;
  const partitions: Partition[] = query.operatorId
    ? listing.operatorShards(orgId, query.operatorId)
    : query.status
      ? listing.statusShards(orgId, query.status)
      : conversationStatuses.flatMap((status) => listing.statusShards(orgId, status));
  const { page, next } = await recentPage(partitions, cursor?.before, query, since);
  // Each key once: BatchGetItem refuses a request that names one twice.
  const unique = [...new Map(page.map((entry) => [`${entry.pk}|${entry.sk}`, tableKey(entry)])).values()];
  const items = unique.length ? await batchGet(unique, { consistent: false }) : [];
  const byKey = new Map(items.map((item) => [`${item.pk}|${item.sk}`, item]));
  const shown = new Set<string>();
  const data = page.flatMap((entry) => {
    const key = `${entry.pk}|${entry.sk}`;
    const item = byKey.get(key);
    if (!item || item.deletedAt || !matches(query, item, since) || shown.has(key)) return [];
    // A status entry the item has left (the index has yet to remove it) is not where the
    // conversation is: shown in its current partition's place instead, on this page or another,
    // never twice (a status filter drops it the same way, through `matches`).
    if (entry.gsi2pk !== undefined && entry.gsi2pk !== statusPartition(orgId, item)) return [];
    shown.add(key);
    return [toConversation(item)];
  });
  return { data, nextCursor: encode(next !== null ? { before: next } : null) };
}

/**
 * Incremental sync (`updatedSince`): the organization's conversations by `updatedAt`, oldest first,
 * from gsi1's `CONVS#UPDATED#<n>` entries (kept for soft-deleted ones), every shard merged, read by
 * key and checked against the listing's other filters; `{ data, nextCursor, done }` as the events
 * feed. A filtered page may be short: the cursor still moves past every entry read.
 */
export async function syncConversations(
  orgId: string,
  query: ListConversationsQuery,
  updatedSince: string,
  since: string | undefined,
): Promise<{ data: Conversation[]; nextCursor: string; done: boolean }> {
  const queryId = JSON.stringify([
    'conversations-sync',
    query.status,
    query.operatorId,
    query.visitorId,
    query.priority,
    query.tag,
  ]);
  const read = await syncPage(orgId, queryId, {
    partitions: keys.conversationListPartition.updatedShards(orgId),
    since: updatedSince,
    cursor: query.cursor,
    limit: query.limit,
  });
  const items = read.entries.length ? await batchGet(read.entries.map(tableKey), { consistent: false }) : [];
  const byKey = new Map(items.map((item) => [`${item.pk}|${item.sk}`, item]));
  const data = read.entries.flatMap((entry) => {
    const item = byKey.get(`${entry.pk}|${entry.sk}`);
    if (!item || !matches(query, item, since)) return [];
    return [{ ...toConversation(item), deletedAt: (item.deletedAt as string | null | undefined) ?? null }];
  });
  return { data, nextCursor: read.nextCursor, done: read.done };
}
