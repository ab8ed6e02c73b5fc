import type pg from 'pg';
import { type ConversationRow, type DocumentRow, type IndexRow, type OrgRow, rowKey } from './projection';
import { writeConversationTerms } from './terms';

/**
 * Writes projected rows into the index, at least once and in any order: a row replaces the stored
 * one only when its version is at least as new, and a deletion is for good (a tombstone keeps no
 * text, and a late record of the live item cannot revive it). A soft-deleted conversation takes its
 * texts with it at once. Every statement names the organization of each row it touches.
 */

/**
 * A text's vector: its words in the organization's language (stemmed), then as written (`simple`,
 * accents folded), so that a prefix (`shipp*`) finds "shipping" although English stems it to "ship".
 * Positions of the second part follow the first's, so a phrase matches within either, never across.
 */
const VECTOR_SQL = (config: string, body: string): string =>
  `CASE WHEN ${config} = 'search_simple'::regconfig THEN to_tsvector(${config}, ${body}) ELSE to_tsvector(${config}, ${body}) || to_tsvector('search_simple'::regconfig, ${body}) END`;

/** Keeps the newest row of each key (the last of equal versions: stream order). */
function newest<T extends IndexRow>(rows: readonly T[]): T[] {
  const byKey = new Map<string, T>();
  for (const row of rows) {
    const seen = byKey.get(rowKey(row));
    if (!seen || row.version >= seen.version || (row.table !== 'org' && 'deleted' in row && row.deleted))
      byKey.set(rowKey(row), row);
  }
  return [...byKey.values()];
}

async function writeOrgs(db: pg.Pool | pg.PoolClient, rows: OrgRow[]): Promise<void> {
  for (const row of rows) {
    const { rows: changed } = await db.query<{ previous: string | null; config: string }>(
      `WITH previous AS (SELECT config::text AS config FROM search_org WHERE org_id = $1)
       INSERT INTO search_org AS o (org_id, config, version) VALUES ($1, $2::regconfig, $3)
       ON CONFLICT (org_id) DO UPDATE SET config = excluded.config, version = excluded.version
         WHERE excluded.version >= o.version
       RETURNING (SELECT config FROM previous) AS previous, config::text AS config`,
      [row.orgId, row.config, row.version],
    );
    const written = changed[0];
    // A new language re-stems every text of the organization (rare: an administrator's setting).
    if (written?.previous && written.previous !== written.config) {
      await db.query(
        `UPDATE search_document SET tsv = ${VECTOR_SQL('$2::regconfig', 'body')} WHERE org_id = $1 AND NOT deleted`,
        [row.orgId, row.config],
      );
      const { rows: all } = await db.query<{ ids: string[] }>(
        'SELECT coalesce(array_agg(conversation_id), ARRAY[]::text[]) AS ids FROM search_conversation WHERE org_id = $1',
        [row.orgId],
      );
      const ids = all[0]?.ids ?? [];
      for (let start = 0; start < ids.length; start += 500)
        await writeConversationTerms(db, row.orgId, ids.slice(start, start + 500));
    }
  }
}

async function writeConversations(db: pg.Pool | pg.PoolClient, rows: ConversationRow[]): Promise<void> {
  if (rows.length === 0) return;
  const { rows: deleted } = await db.query<{ org_id: string; conversation_id: string }>(
    `INSERT INTO search_conversation AS c (org_id, conversation_id, version, deleted, status, priority, tags,
       operator_id, team_id, visitor_id, custom_fields, created_at, updated_at, last_message_at)
     SELECT r.org_id, r.conversation_id, r.version, r.deleted, r.status, r.priority,
       ARRAY(SELECT jsonb_array_elements_text(r.tags)), r.operator_id, r.team_id, r.visitor_id, r.custom_fields,
       r.created_at, r.updated_at, r.last_message_at
     FROM jsonb_to_recordset($1::jsonb) AS r(org_id text, conversation_id text, version text, deleted boolean,
       status text, priority text, tags jsonb, operator_id text, team_id text, visitor_id text,
       custom_fields jsonb, created_at timestamptz, updated_at timestamptz, last_message_at timestamptz)
     ON CONFLICT (org_id, conversation_id) DO UPDATE SET
       version = excluded.version, deleted = c.deleted OR excluded.deleted, status = excluded.status,
       priority = excluded.priority, tags = excluded.tags, operator_id = excluded.operator_id,
       team_id = excluded.team_id, visitor_id = excluded.visitor_id, custom_fields = excluded.custom_fields,
       created_at = excluded.created_at, updated_at = excluded.updated_at,
       last_message_at = excluded.last_message_at
     WHERE excluded.version >= c.version OR (excluded.deleted AND NOT c.deleted)
     RETURNING org_id, conversation_id, deleted`,
    [
      JSON.stringify(
        rows.map((row) => ({
          org_id: row.orgId,
          conversation_id: row.conversationId,
          version: row.version,
          deleted: row.deleted,
          status: row.status,
          priority: row.priority,
          tags: row.tags,
          operator_id: row.operatorId,
          team_id: row.teamId,
          visitor_id: row.visitorId,
          custom_fields: row.customFields,
          created_at: row.createdAt,
          updated_at: row.updatedAt,
          last_message_at: row.lastMessageAt,
        })),
      ),
    ],
  );
  const gone = deleted.filter((row) => (row as { deleted?: boolean }).deleted);
  // A deleted conversation's texts leave the index now, not message by message as the purge goes.
  for (const row of gone)
    await db.query(
      `UPDATE search_document SET deleted = true, body = '', tsv = NULL
       WHERE org_id = $1 AND conversation_id = $2 AND NOT deleted`,
      [row.org_id, row.conversation_id],
    );
}

async function writeDocuments(db: pg.Pool | pg.PoolClient, rows: DocumentRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `WITH input AS (
       SELECT r.*, coalesce(o.config, 'search_simple'::regconfig) AS config,
         r.deleted OR coalesce(c.deleted, false) AS gone
       FROM jsonb_to_recordset($1::jsonb) AS r(org_id text, doc_id text, conversation_id text, kind text,
         side text, created_at timestamptz, version text, deleted boolean, body text)
       LEFT JOIN search_org o ON o.org_id = r.org_id
       LEFT JOIN search_conversation c ON c.org_id = r.org_id AND c.conversation_id = r.conversation_id
     )
     INSERT INTO search_document AS d (org_id, doc_id, conversation_id, kind, side, created_at, version,
       deleted, body, tsv)
     SELECT org_id, doc_id, conversation_id, kind, side, created_at, version, gone,
       CASE WHEN gone THEN '' ELSE body END,
       CASE WHEN gone THEN NULL ELSE ${VECTOR_SQL('config', 'body')} END
     FROM input
     ON CONFLICT (org_id, doc_id) DO UPDATE SET
       version = excluded.version, side = excluded.side, created_at = excluded.created_at,
       deleted = d.deleted OR excluded.deleted,
       body = CASE WHEN d.deleted OR excluded.deleted THEN '' ELSE excluded.body END,
       tsv = CASE WHEN d.deleted OR excluded.deleted THEN NULL ELSE excluded.tsv END
     WHERE excluded.version >= d.version OR (excluded.deleted AND NOT d.deleted)`,
    [
      JSON.stringify(
        rows.map((row) => ({
          org_id: row.orgId,
          doc_id: row.docId,
          conversation_id: row.conversationId,
          kind: row.kind,
          side: row.side,
          created_at: row.createdAt,
          version: row.version,
          deleted: row.deleted,
          body: row.body,
        })),
      ),
    ],
  );
}

/** Writes a batch of rows (organizations first, then conversations, then their texts). */
export async function writeRows(db: pg.Pool | pg.PoolClient, rows: readonly IndexRow[]): Promise<void> {
  const latest = newest(rows);
  await writeOrgs(
    db,
    latest.filter((row): row is OrgRow => row.table === 'org'),
  );
  await writeConversations(
    db,
    latest.filter((row): row is ConversationRow => row.table === 'conversation'),
  );
  await writeDocuments(
    db,
    latest.filter((row): row is DocumentRow => row.table === 'document'),
  );
  await writeTermsOf(db, latest);
}

/**
 * Recomputes the words of every conversation the batch touched from its documents (a conversation
 * row that arrives after its messages gets them too). Derived, never patched: a record handled late
 * or twice leaves the same vectors.
 */
async function writeTermsOf(db: pg.Pool | pg.PoolClient, rows: readonly IndexRow[]): Promise<void> {
  const byOrg = new Map<string, Set<string>>();
  for (const row of rows) {
    if (row.table === 'org') continue;
    const ids = byOrg.get(row.orgId) ?? new Set<string>();
    ids.add(row.conversationId);
    byOrg.set(row.orgId, ids);
  }
  for (const [orgId, ids] of byOrg) await writeConversationTerms(db, orgId, [...ids]);
}
