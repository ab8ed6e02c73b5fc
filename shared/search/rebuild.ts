import { GetCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../db/client';
import { keys } from '../db/keys';
import { searchPool } from './connection';
import { type IndexRow, rowsOfItem } from './projection';
import { writeRows } from './writer';

/** What a rebuild has done so far (its progress lines). */
export interface RebuildProgress {
  organizations: number;
  conversations: number;
  rows: number;
}

const BATCH_ROWS = 1_000;
const PARALLEL_CONVERSATIONS = 8;

/** Every item of a partition, page by page. */
async function* partition(pk: string, index?: string, indexKey = 'pk') {
  for await (const page of paginateQuery(
    { client: db },
    {
      TableName: tableName,
      ...(index && { IndexName: index }),
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': indexKey },
      ExpressionAttributeValues: { ':pk': pk },
    },
  ))
    yield* page.Items ?? [];
}

/**
 * Rebuilds the search index from the table (the system of record): every organization, or the
 * ones named; each conversation's partition (the conversation, its messages and notes) through the
 * same projection and writer as the stream worker, so rows already newer are left as they are and
 * the stream may keep running meanwhile. `fresh` first drops the organization's rows.
 */
export async function rebuildIndex(options: {
  orgIds?: readonly string[];
  fresh?: boolean;
  onProgress?: (progress: RebuildProgress, orgId: string) => void;
}): Promise<RebuildProgress> {
  const progress: RebuildProgress = { organizations: 0, conversations: 0, rows: 0 };
  const pool = searchPool();
  const orgIds: string[] = options.orgIds ? [...options.orgIds] : [];
  if (!options.orgIds)
    for await (const item of partition('PLATFORM#ORGANIZATIONS', 'gsi1', 'gsi1pk')) {
      const orgId = keys.parseOrganization(String(item.pk));
      if (orgId) orgIds.push(orgId);
    }
  for (const orgId of orgIds) {
    if (options.fresh)
      for (const table of ['search_document', 'search_conversation', 'search_org'])
        await pool.query(`DELETE FROM ${table} WHERE org_id = $1`, [orgId]);
    const organization = await db.send(
      new GetCommand({ TableName: tableName, Key: keys.organization(orgId) }),
    );
    if (organization.Item) await writeRows(pool, rowsOfItem(organization.Item));
    // Live conversations are in the four status listings of gsi2, each spread over shards; deleted
    // ones are never searched.
    const conversationIds: string[] = [];
    for (const status of ['open', 'pending', 'snoozed', 'closed'] as const) {
      for (const listing of keys.conversationListPartition.statusShards(orgId, status)) {
        for await (const entry of partition(listing.pk, listing.index, `${listing.index}pk`)) {
          const owner = keys.parseConversationPartition(String(entry.pk));
          if (owner) conversationIds.push(owner.conversationId);
        }
      }
    }
    let pending: IndexRow[] = [];
    const flush = async () => {
      const rows = pending;
      pending = [];
      if (rows.length > 0) await writeRows(pool, rows);
      progress.rows += rows.length;
    };
    for (let start = 0; start < conversationIds.length; start += PARALLEL_CONVERSATIONS) {
      const chunk = conversationIds.slice(start, start + PARALLEL_CONVERSATIONS);
      const rows = await Promise.all(
        chunk.map(async (conversationId) => {
          const found: IndexRow[] = [];
          for await (const item of partition(keys.conversation(orgId, conversationId).pk))
            found.push(...rowsOfItem(item));
          return found;
        }),
      );
      // Conversations before their texts, within each write (the writer orders them).
      pending.push(...rows.flat());
      progress.conversations += chunk.length;
      if (pending.length >= BATCH_ROWS) {
        await flush();
        options.onProgress?.(progress, orgId);
      }
    }
    await flush();
    progress.organizations += 1;
    options.onProgress?.(progress, orgId);
  }
  return progress;
}
