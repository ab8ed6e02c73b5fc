import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import type { Actor } from '../conversations/actor';
import { uuidv7 } from '../ids';
import type { Conversation } from '../schemas/conversation';
import { conversationStatuses } from '../schemas/conversation-statuses';
import type { ExportJob } from '../schemas/export';
import { exportJobProjection } from '../schemas/projections';
import { batchGet } from './batch';
import { db, tableName, ttlSeconds } from './client';
import { type StoredConversation, storedConversationOf } from './conversations';
import { isConditionFailure } from './errors';
import { type Key, keys } from './keys';
import { type StoredMessage, toMessage } from './messages';
import { project } from './project';
import { childrenQuery } from './query';

type Item = Record<string, unknown>;

/** What a conversation export selects; `from`/`to` bound `lastMessageAt` (inclusive ISO instants). */
export interface ExportFilters {
  status?: Conversation['status'] | undefined;
  operatorId?: string | undefined;
  /** The conversation has every one of them. */
  tags?: readonly string[] | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

interface Listing {
  index: 'gsi2' | 'gsi3';
  pk: string;
}

/**
 * The most selective listing, every shard of it: the operator's partitions, one status's, or all
 * four statuses'.
 */
function listingsOf(orgId: string, filters: ExportFilters): Listing[] {
  const listing = keys.conversationListPartition;
  if (filters.operatorId) return listing.operatorShards(orgId, filters.operatorId);
  if (filters.status) return listing.statusShards(orgId, filters.status);
  return conversationStatuses.flatMap((status) => listing.statusShards(orgId, status));
}

/**
 * The key condition (the `lastMessageAt` range on the recency sort key `<lastMessageAt>#<id>`) and
 * the filter on projected attributes (status in the operator index, tags), as one Query's input.
 */
function queryInput(listing: Listing, filters: ExportFilters) {
  const names: Record<string, string> = { '#pk': `${listing.index}pk` };
  const values: Record<string, unknown> = { ':pk': listing.pk };
  let condition = '#pk = :pk';
  if (filters.from || filters.to) names['#sk'] = `${listing.index}sk`;
  // `~` sorts after every character of an id: the upper bound keeps conversations of that instant.
  if (filters.from && filters.to) {
    condition += ' AND #sk BETWEEN :from AND :to';
    Object.assign(values, { ':from': filters.from, ':to': `${filters.to}#~` });
  } else if (filters.from) {
    condition += ' AND #sk >= :from';
    values[':from'] = filters.from;
  } else if (filters.to) {
    condition += ' AND #sk <= :to';
    values[':to'] = `${filters.to}#~`;
  }
  const filter: string[] = [];
  if (filters.status && listing.index === 'gsi3') {
    names['#status'] = 'status';
    values[':status'] = filters.status;
    filter.push('#status = :status');
  }
  (filters.tags ?? []).forEach((tag, i) => {
    names['#tags'] = 'tags';
    values[`:tag${i}`] = tag;
    filter.push(`contains(#tags, :tag${i})`);
  });
  return {
    TableName: tableName,
    IndexName: listing.index,
    KeyConditionExpression: condition,
    ...(filter.length ? { FilterExpression: filter.join(' AND ') } : {}),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/** The filters again, on the conversation read by key (an index trails the table by a moment). */
function stillMatches(conversation: StoredConversation, filters: ExportFilters): boolean {
  if (conversation.deletedAt) return false;
  if (filters.status && conversation.status !== filters.status) return false;
  if (filters.operatorId && conversation.operatorId !== filters.operatorId) return false;
  if (filters.tags?.some((tag) => !conversation.tags.includes(tag))) return false;
  if (filters.from && conversation.lastMessageAt < filters.from) return false;
  if (filters.to && conversation.lastMessageAt > filters.to) return false;
  return true;
}

/**
 * How many conversations an export matches, counting no further than `ceiling + 1`: `Select=COUNT`
 * Queries of the listing's index entries (keys and filtered attributes only, ~200 B each, so a
 * 1 MB page counts ~5,000), the partitions in parallel.
 */
export async function countConversations(
  orgId: string,
  filters: ExportFilters,
  ceiling: number,
): Promise<number> {
  const counts = await Promise.all(
    listingsOf(orgId, filters).map(async (listing) => {
      let total = 0;
      let startKey: Item | undefined;
      do {
        const page = await db.send(
          new QueryCommand({ ...queryInput(listing, filters), Select: 'COUNT', ExclusiveStartKey: startKey }),
        );
        total += page.Count ?? 0;
        startKey = page.LastEvaluatedKey;
      } while (startKey && total <= ceiling);
      return total;
    }),
  );
  return counts.reduce((sum, count) => sum + count, 0);
}

/** Index entries of one listing, newest first, a page at a time. */
class ListingReader {
  private buffer: Item[] = [];
  private startKey: Item | undefined;
  private done = false;

  constructor(
    private readonly listing: Listing,
    private readonly filters: ExportFilters,
  ) {}

  /** The next entry without taking it; undefined at the end. */
  async peek(): Promise<Item | undefined> {
    while (this.buffer.length === 0 && !this.done) {
      const page = await db.send(
        new QueryCommand({
          ...queryInput(this.listing, this.filters),
          ScanIndexForward: false,
          Limit: 200,
          ExclusiveStartKey: this.startKey,
        }),
      );
      this.buffer = page.Items ?? [];
      this.startKey = page.LastEvaluatedKey;
      this.done = !this.startKey;
    }
    return this.buffer[0];
  }

  take(): Item | undefined {
    return this.buffer.shift();
  }

  recency(entry: Item): string {
    return String(entry[`${this.listing.index}sk`]);
  }
}

/** Conversations read by key per chunk of index entries (one BatchGetItem of up to 50). */
const CHUNK = 50;

/**
 * The conversations an export matches, newest `lastMessageAt` first (the partitions' entries merged
 * as they are read), in chunks. Memory holds one Query page per partition and one chunk; a
 * conversation that moves between partitions while the export runs is written once.
 */
export async function* conversationsToExport(
  orgId: string,
  filters: ExportFilters,
): AsyncGenerator<StoredConversation[]> {
  const readers = listingsOf(orgId, filters).map((listing) => new ListingReader(listing, filters));
  const seen = new Set<string>();
  for (;;) {
    const entries: Item[] = [];
    while (entries.length < CHUNK) {
      // Only the readers whose page ran out send a Query; with a partition per status and shard,
      // sent one after another they would add up to a round trip each.
      const heads = await Promise.all(readers.map((reader) => reader.peek()));
      let newest: ListingReader | undefined;
      let newestRecency = '';
      readers.forEach((reader, i) => {
        const head = heads[i];
        if (head && (!newest || reader.recency(head) > newestRecency)) {
          newest = reader;
          newestRecency = reader.recency(head);
        }
      });
      const entry = newest?.take();
      if (!entry) break;
      entries.push(entry);
    }
    if (entries.length === 0) return;
    const items = await batchGet(
      entries.map((entry): Key => ({ pk: String(entry.pk), sk: String(entry.sk) })),
      { consistent: false },
    );
    const byPk = new Map(items.map((item) => [String(item.pk), item]));
    const chunk: StoredConversation[] = [];
    for (const entry of entries) {
      const item = byPk.get(String(entry.pk));
      if (!item) continue;
      const conversation = storedConversationOf(item);
      if (seen.has(conversation.id) || !stillMatches(conversation, filters)) continue;
      seen.add(conversation.id);
      chunk.push(conversation);
    }
    if (chunk.length) yield chunk;
  }
}

/**
 * A conversation's messages, oldest first, one Query page (≤ 1 MB) at a time: a transcript or an
 * export never holds more than a page of one conversation.
 */
export async function* messagePages(orgId: string, conversationId: string): AsyncGenerator<StoredMessage[]> {
  let startKey: Item | undefined;
  do {
    const page = await db.send(
      new QueryCommand({
        ...childrenQuery(keys.conversationPartition(orgId, conversationId), keys.messagePrefix),
        ExclusiveStartKey: startKey,
      }),
    );
    startKey = page.LastEvaluatedKey;
    const items = page.Items ?? [];
    if (items.length) {
      yield items.map((item) => ({ ...toMessage(item), editCount: Number(item.editCount ?? 0) }));
    }
  } while (startKey);
}

/** Every operator's name, by id: one Query of the organization's partition (operators only). */
export async function operatorNames(orgId: string): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const organization = keys.organization(orgId);
  let startKey: Item | undefined;
  do {
    const page = await db.send(
      new QueryCommand({
        ...childrenQuery(organization.pk, keys.operatorPrefix),
        ProjectionExpression: 'id, #name',
        ExpressionAttributeNames: { '#name': 'name' },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) names.set(String(item.id), String(item.name));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return names;
}

/* ------------------------------------------------------------------ export jobs */

/** Jobs and their files live 7 days (the bucket's expiry). */
export const EXPORT_JOB_RETENTION_MS = 7 * 86_400_000;

export interface StoredExportJob {
  id: string;
  orgId: string;
  kind: 'transcript_pdf';
  conversationId: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  /** Where the file is in the exports bucket, once completed. */
  objectKey: string | null;
  error: string | null;
  requestedBy: Actor;
  createdAt: string;
  updatedAt: string;
  /** Epoch seconds (TTL). */
  expiresAt: number;
}

const jobOf = (item: Item): StoredExportJob => ({
  id: String(item.id),
  orgId: String(item.orgId),
  kind: 'transcript_pdf',
  conversationId: String(item.conversationId),
  status: item.status as StoredExportJob['status'],
  objectKey: (item.objectKey as string | null | undefined) ?? null,
  error: (item.error as string | null | undefined) ?? null,
  requestedBy: item.requestedBy as Actor,
  createdAt: String(item.createdAt),
  updatedAt: String(item.updatedAt),
  expiresAt: Number(item.expiresAt),
});

const projectJob = project<ExportJob>(exportJobProjection);

/**
 * The ExportJob resource, but for its download: `jobId` is the job's id, `error` only a failed job's,
 * and `expiresAt` left unset (the item's attribute of that name is its TTL, in epoch seconds). The
 * route sets `downloadUrl` and its `expiresAt` over them (functions/exports/jobs.ts).
 */
export function exportJobOf(job: StoredExportJob): ExportJob {
  return projectJob({
    ...job,
    jobId: job.id,
    expiresAt: undefined,
    error: job.status === 'failed' && job.error ? job.error : undefined,
  });
}

export const exportJobs = {
  async create(input: {
    orgId: string;
    conversationId: string;
    requestedBy: Actor;
  }): Promise<StoredExportJob> {
    const now = clock.nowMs();
    const at = new Date(now).toISOString();
    const job: StoredExportJob = {
      id: uuidv7(now),
      orgId: input.orgId,
      kind: 'transcript_pdf',
      conversationId: input.conversationId,
      status: 'queued',
      objectKey: null,
      error: null,
      requestedBy: input.requestedBy,
      createdAt: at,
      updatedAt: at,
      expiresAt: ttlSeconds(now + EXPORT_JOB_RETENTION_MS),
    };
    await db.send(
      new PutCommand({
        TableName: tableName,
        Item: { ...keys.exportJob(job.orgId, job.id), entity: 'exportJob', ...job },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return job;
  },

  /** The job, or undefined when missing, another organization's (its key) or expired. */
  async get(orgId: string, jobId: string): Promise<StoredExportJob | undefined> {
    const { Item } = await db.send(
      new GetCommand({ TableName: tableName, Key: keys.exportJob(orgId, jobId), ConsistentRead: true }),
    );
    if (!Item || Number(Item.expiresAt) <= ttlSeconds(clock.nowMs())) return undefined;
    return jobOf(Item);
  },

  /**
   * Marks the job running, unless it already finished (a redelivered message): false then, and
   * the worker leaves it be.
   */
  async start(orgId: string, jobId: string): Promise<boolean> {
    try {
      await db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.exportJob(orgId, jobId),
          UpdateExpression: 'SET #status = :running, updatedAt = :now',
          ConditionExpression: 'attribute_exists(pk) AND #status IN (:queued, :running)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':running': 'running',
            ':queued': 'queued',
            ':now': clock.nowIso(),
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  },

  async finish(
    orgId: string,
    jobId: string,
    outcome: { status: 'completed'; objectKey: string } | { status: 'failed'; error: string },
  ): Promise<void> {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.exportJob(orgId, jobId),
        UpdateExpression: 'SET #status = :status, objectKey = :objectKey, #error = :error, updatedAt = :now',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#status': 'status', '#error': 'error' },
        ExpressionAttributeValues: {
          ':status': outcome.status,
          ':objectKey': outcome.status === 'completed' ? outcome.objectKey : null,
          ':error': outcome.status === 'failed' ? outcome.error : null,
          ':now': clock.nowIso(),
        },
      }),
    );
  },
};
