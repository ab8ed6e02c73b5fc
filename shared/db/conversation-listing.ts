import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Conversation, ListConversationsQuery } from '../schemas/conversation';
import { conversationStatuses } from '../schemas/conversation-statuses';
import { batchGet } from './batch';
import { db, tableName } from './client';
import { toConversation } from './conversations';
import { decodeCursor, encodeCursor, malformedCursor } from './cursor';
import { type Key, keys } from './keys';
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

/** Where each partition of a merged listing resumes: a start key, `null` once read to the end. */
type Positions = Record<string, Item | null>;

interface PartitionRead {
  partition: Partition;
  /** Entries that match, newest first: at most `limit + 1`. */
  found: Item[];
  /** Read to the end of the partition. */
  exhausted: boolean;
  /** Where the last page stopped, when not exhausted. */
  scannedTo: Item | undefined;
}

/**
 * Newest first from one partition of a recency index (`<lastMessageAt>#<id>`), until `limit + 1`
 * entries match: with that many from every partition, the merged page is exact.
 */
async function readPartition(
  partition: Partition,
  start: Item | undefined,
  query: ListConversationsQuery,
  since: string | undefined,
): Promise<PartitionRead> {
  const skName = `${partition.index}sk`;
  // A status partition needs no status filter: only priority and tag drop entries there.
  const filtered = Boolean(query.priority || query.tag || (query.status && partition.index === 'gsi3'));
  const found: Item[] = [];
  let startKey = start;
  for (let page = 0; page < MAX_QUERY_PAGES; page++) {
    const result = await db.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: partition.index,
        KeyConditionExpression: since ? '#pk = :pk AND #sk >= :since' : '#pk = :pk',
        ExpressionAttributeNames: { '#pk': `${partition.index}pk`, ...(since ? { '#sk': skName } : {}) },
        ExpressionAttributeValues: { ':pk': partition.pk, ...(since ? { ':since': since } : {}) },
        ScanIndexForward: false,
        Limit: filtered ? Math.max(50, query.limit * 2) : query.limit + 1,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const entry of result.Items ?? []) {
      if (matches(query, entry, undefined)) found.push(entry);
      if (found.length > query.limit) return { partition, found, exhausted: false, scannedTo: undefined };
    }
    startKey = result.LastEvaluatedKey;
    if (!startKey) return { partition, found, exhausted: true, scannedTo: undefined };
  }
  return { partition, found, exhausted: false, scannedTo: startKey };
}

const recencyOf = (read: PartitionRead, entry: Item) => String(entry[`${read.partition.index}sk`]);

/** The status partition (gsi2) a conversation item belongs in now. */
const statusPartition = (orgId: string, item: Item): string =>
  keys.conversationListPartition.status(orgId, String(item.status)).pk;

/**
 * One page of a listing sorted by recency over one or more partitions (the organization's four
 * status partitions are read in parallel and merged), and where each partition resumes.
 */
async function recentPage(
  partitions: readonly Partition[],
  positions: Positions | undefined,
  query: ListConversationsQuery,
  since: string | undefined,
): Promise<{ page: Item[]; next: Positions | null }> {
  const open = partitions.filter((partition) => positions?.[partition.pk] !== null);
  const reads = await Promise.all(
    open.map((partition) => readPartition(partition, positions?.[partition.pk] ?? undefined, query, since)),
  );
  const candidates = reads
    .flatMap((read) => read.found.map((entry) => ({ read, entry, recency: recencyOf(read, entry) })))
    .sort((a, b) => (a.recency < b.recency ? 1 : a.recency > b.recency ? -1 : 0));
  // While an index lags, a conversation whose status just changed can sit in two status
  // partitions at once (the new entry already there, the old one not yet removed). Its entries
  // count once toward the page, and all of them are passed, so each partition resumes after its
  // own; `listConversations` shows the one its item says is current.
  const taken: typeof candidates = [];
  const counted = new Set<string>();
  for (const candidate of candidates) {
    const id = String(candidate.entry.pk);
    if (!counted.has(id)) {
      if (counted.size === query.limit) break;
      counted.add(id);
    }
    taken.push(candidate);
  }
  const next: Positions = { ...positions };
  for (const partition of partitions) if (!open.includes(partition)) next[partition.pk] = null;
  for (const read of reads) {
    const mine = taken.filter((candidate) => candidate.read === read);
    const last = mine.at(-1)?.entry;
    const allTaken = mine.length === read.found.length;
    const resumeAfter = (entry: Item) => ({
      pk: entry.pk,
      sk: entry.sk,
      [`${read.partition.index}pk`]: entry[`${read.partition.index}pk`],
      [`${read.partition.index}sk`]: entry[`${read.partition.index}sk`],
    });
    if (allTaken && read.exhausted) next[read.partition.pk] = null;
    else if (allTaken && read.scannedTo) next[read.partition.pk] = read.scannedTo;
    else if (last) next[read.partition.pk] = resumeAfter(last);
    // Nothing of it taken yet: it resumes where it started.
  }
  const more = partitions.some((partition) => next[partition.pk] !== null);
  return { page: taken.map((candidate) => candidate.entry), next: more ? next : null };
}

/**
 * One page of a visitor's conversations: the index holds them by creation (their entry does not move
 * with every message), so all of the visitor's entries are read and sorted by `lastMessageAt`.
 */
async function visitorPage(
  orgId: string,
  visitorId: string,
  after: [string, string] | undefined,
  query: ListConversationsQuery,
  since: string | undefined,
): Promise<{ page: Item[]; next: [string, string] | null }> {
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
  const ordered = entries
    .filter((entry) => matches(query, entry, since))
    .filter((entry) => !after || newerFirst(position(entry), after) > 0)
    .sort((a, b) => newerFirst(position(a), position(b)));
  const page = ordered.slice(0, query.limit);
  const last = page.at(-1);
  return { page, next: ordered.length > query.limit && last ? position(last) : null };
}

/** What a cursor of this listing holds: partition positions, or a visitor listing's last position. */
interface ListingCursor {
  p?: Positions;
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
  let page: Item[];
  let next: ListingCursor | null;
  if (query.visitorId) {
    if (cursor && !Array.isArray(cursor.a)) throw malformedCursor();
    const read = await visitorPage(orgId, query.visitorId, cursor?.a, query, since);
    page = read.page;
    next = read.next ? { a: read.next } : null;
  } else {
    if (cursor && (typeof cursor.p !== 'object' || cursor.p === null)) throw malformedCursor();
    const listing = keys.conversationListPartition;
    const partitions: Partition[] = query.operatorId
      ? [listing.operator(orgId, query.operatorId)]
      : query.status
        ? [listing.status(orgId, query.status)]
        : conversationStatuses.map((status) => listing.status(orgId, status));
    const read = await recentPage(partitions, cursor?.p, query, since);
    page = read.page;
    next = read.next ? { p: read.next } : null;
  }
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
  return { data, nextCursor: next ? encodeCursor(orgId, queryId, next as Record<string, unknown>) : null };
}

/**
 * Incremental sync (`updatedSince`): the organization's conversations by `updatedAt`, oldest first,
 * from gsi1's `CONVS#UPDATED` entries (kept for soft-deleted ones), read by key and checked against
 * the listing's other filters; `{ data, nextCursor, done }` as the events feed. A filtered page may
 * be short: the cursor still moves past every entry read.
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
    partition: { index: 'gsi1', pk: keys.conversationUpdated(orgId, '', '').gsi1pk },
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
