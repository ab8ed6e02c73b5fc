import type pg from 'pg';
import { writeConversationTerms } from './terms';

/**
 * The search index's tables: a projection of the DynamoDB table (the system of record), rebuilt by
 * `npm run search:reindex`. Every row and every index starts with the organization.
 *
 * - `search_org`: the text search configuration of each organization (its `defaultLocale`).
 * - `search_conversation`: one row per conversation, the fields filters and sorts read, and the
 *   conversation's words (`tsv`: title and messages; `note_tsv`: internal notes, a column of its own
 *   so that a visitor's query never names it), derived from its documents (terms.ts).
 *   Words and prefixes match and rank here, one row per conversation instead of one per message.
 * - `search_document`: one row per searchable text: the title (`doc_id` = `title:<c>`), each message,
 *   each internal note. Deleted texts stay as tombstones (empty, `deleted`), so a stream record that
 *   arrives late or twice never brings them back.
 *
 * `version` is the source item's own order (see projection.ts): a row is overwritten only by a
 * record at least as new.
 */

/** Languages PostgreSQL stems, by the first subtag of a locale; every other locale uses `simple`. */
export const STEMMED_LANGUAGES: Readonly<Record<string, string>> = {
  ar: 'arabic',
  hy: 'armenian',
  eu: 'basque',
  ca: 'catalan',
  da: 'danish',
  nl: 'dutch',
  en: 'english',
  et: 'estonian',
  fi: 'finnish',
  fr: 'french',
  de: 'german',
  el: 'greek',
  hi: 'hindi',
  hu: 'hungarian',
  id: 'indonesian',
  ga: 'irish',
  it: 'italian',
  lt: 'lithuanian',
  ne: 'nepali',
  nb: 'norwegian',
  nn: 'norwegian',
  no: 'norwegian',
  pt: 'portuguese',
  ro: 'romanian',
  ru: 'russian',
  sr: 'serbian',
  es: 'spanish',
  sv: 'swedish',
  ta: 'tamil',
  tr: 'turkish',
  yi: 'yiddish',
};

/** The text search configuration of a locale: its language's stemmer, accents folded. */
export function searchConfigOf(locale: string | undefined): string {
  const language = STEMMED_LANGUAGES[(locale ?? '').split('-')[0]?.toLowerCase() ?? ''];
  return `search_${language ?? 'simple'}`;
}

const configurations = [...new Set(Object.values(STEMMED_LANGUAGES))];

/** Idempotent: run at every start of the local stack, and by the deployment's migration. */
export const SCHEMA_SQL: readonly string[] = [
  'CREATE EXTENSION IF NOT EXISTS unaccent',
  ...['simple', ...configurations].map(
    (language) => `DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = 'search_${language}') THEN
    CREATE TEXT SEARCH CONFIGURATION search_${language} (COPY = pg_catalog.${language});
    ALTER TEXT SEARCH CONFIGURATION search_${language}
      ALTER MAPPING FOR hword, hword_part, word WITH unaccent, ${language === 'simple' ? 'simple' : `${language}_stem`};
  END IF;
END $$`,
  ),
  `CREATE TABLE IF NOT EXISTS search_org (
    org_id text PRIMARY KEY,
    config regconfig NOT NULL,
    version text NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS search_conversation (
    org_id text NOT NULL,
    conversation_id text NOT NULL,
    version text NOT NULL,
    deleted boolean NOT NULL DEFAULT false,
    status text NOT NULL,
    priority text NOT NULL,
    tags text[] NOT NULL DEFAULT '{}',
    operator_id text,
    team_id text,
    visitor_id text NOT NULL,
    custom_fields jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    last_message_at timestamptz NOT NULL,
    PRIMARY KEY (org_id, conversation_id)
  )`,
  'CREATE INDEX IF NOT EXISTS search_conversation_recency ON search_conversation (org_id, last_message_at, conversation_id) WHERE NOT deleted',
  `CREATE TABLE IF NOT EXISTS search_document (
    org_id text NOT NULL,
    doc_id text NOT NULL,
    conversation_id text NOT NULL,
    kind text NOT NULL,
    side text,
    created_at timestamptz NOT NULL,
    version text NOT NULL,
    deleted boolean NOT NULL DEFAULT false,
    body text NOT NULL DEFAULT '',
    tsv tsvector,
    PRIMARY KEY (org_id, doc_id)
  )`,
  'CREATE EXTENSION IF NOT EXISTS btree_gin',
  // Added after the first release: an existing data dir gains them here and is filled just below.
  'ALTER TABLE search_conversation ADD COLUMN IF NOT EXISTS tsv tsvector',
  'ALTER TABLE search_conversation ADD COLUMN IF NOT EXISTS note_tsv tsvector',
  'ALTER TABLE search_conversation ADD COLUMN IF NOT EXISTS phrase_tsv tsvector',
  'ALTER TABLE search_conversation ADD COLUMN IF NOT EXISTS note_phrase_tsv tsvector',
  // An index of the fields filters read, in recency order: a query of filters only counts and
  // pages from it (an index-only scan) without reading the rows, which carry the vectors.
  'CREATE INDEX IF NOT EXISTS search_conversation_fields ON search_conversation (org_id, last_message_at, conversation_id) INCLUDE (status, priority, tags, operator_id, team_id, visitor_id, created_at, updated_at) WHERE NOT deleted',
  // Vectors of an index written while they were kept out of line are left as they are.

  'CREATE INDEX IF NOT EXISTS search_conversation_terms ON search_conversation USING gin (org_id, tsv) WHERE NOT deleted',
  'CREATE INDEX IF NOT EXISTS search_conversation_note_terms ON search_conversation USING gin (org_id, note_tsv) WHERE NOT deleted',
  'CREATE INDEX IF NOT EXISTS search_conversation_pairs ON search_conversation USING gin (org_id, phrase_tsv) WHERE NOT deleted',
  'CREATE INDEX IF NOT EXISTS search_conversation_note_pairs ON search_conversation USING gin (org_id, note_phrase_tsv) WHERE NOT deleted',
  // The organization first in the GIN index: a tenant's terms are found without touching another's.
  'CREATE INDEX IF NOT EXISTS search_document_terms ON search_document USING gin (org_id, tsv) WHERE NOT deleted',
  'CREATE INDEX IF NOT EXISTS search_document_conversation ON search_document (org_id, conversation_id)',
];

/** Conversations whose vectors are filled per statement by `migrate` (an index from before them). */
const BACKFILL_BATCH = 500;

export async function migrate(
  client: pg.Pool | pg.Client,
  onProgress?: (conversations: number) => void,
): Promise<void> {
  for (const statement of SCHEMA_SQL) await client.query(statement);
  // An index written before the conversation vectors existed: filled once, in batches; a second
  // run finds nothing to do (every conversation has at least empty vectors).
  let done = 0;
  for (;;) {
    const { rows } = await client.query<{ org_id: string; ids: string[] }>(
      `SELECT org_id, array_agg(conversation_id) AS ids FROM (
         SELECT org_id, conversation_id FROM search_conversation WHERE tsv IS NULL OR phrase_tsv IS NULL LIMIT ${BACKFILL_BATCH}
       ) n GROUP BY org_id`,
    );
    if (rows.length === 0) return;
    for (const row of rows) {
      // Rows with no live documents get empty vectors (NULL is distinct from them).
      await writeConversationTerms(client, row.org_id, row.ids);
      done += row.ids.length;
    }
    onProgress?.(done);
  }
}
