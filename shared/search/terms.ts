import type pg from 'pg';

/**
 * The words of each conversation, derived from its live documents: what search.ts matches words,
 * prefixes and phrases against and ranks by, one row per conversation instead of one per message.
 *
 * - `tsv` / `note_tsv` (notes apart, so that a visitor's query never names them) keep each word
 *   once per bucket of texts that hold it (title, system message, visitor message, operator
 *   message: the weights A–D), with one position per text holding it (at most
 *   TERM_FREQUENCY_CAP): small (the conversation's vocabulary, whatever its length: never near
 *   tsvector's 1 MB or its positions' 16,383), exact for word, prefix and weight tests, and what
 *   ts_rank reads.
 * - `phrase_tsv` / `note_phrase_tsv` keep each pair of adjacent words of a text (`a b`), weighted
 *   the same way: a two-word phrase is one lookup, a longer one a test of its pairs before its
 *   documents are read. Pairs never span two texts.
 *
 * Recomputed from the documents (which are versioned) whenever a batch touches the conversation:
 * running it again, or late, gives the same vectors.
 */
export const WEIGHTS = { title: 'A', system: 'B', visitor: 'C', operator: 'D' } as const;
type Bucket = 'A' | 'B' | 'C' | 'D' | 'N';
/** Positions of a bucket start here, so that each keeps its own (tsvector positions are unique). */
const BUCKET_BASE: Record<Bucket, number> = { A: 1, B: 11, C: 21, D: 31, N: 1 };
/** Texts of a bucket counted per word, at most: ts_rank's weight of the k-th falls as 1/k². */
export const TERM_FREQUENCY_CAP = 4;

/** One entry of tsvector's text form: `'lexeme'` then `:1A,2` (quotes and backslashes doubled). */
const ENTRY = /'((?:''|\\\\|[^'\\])*)'(?::([0-9A-D,]+))?/g;

function parseVector(text: string): Map<number, string[]> {
  const byPosition = new Map<number, string[]>();
  for (const match of text.matchAll(ENTRY)) {
    const lexeme = (match[1] ?? '').replaceAll("''", "'").replaceAll('\\\\', '\\');
    for (const position of (match[2] ?? '').split(',')) {
      const at = Number.parseInt(position, 10);
      if (!Number.isFinite(at)) continue;
      const list = byPosition.get(at) ?? [];
      list.push(lexeme);
      byPosition.set(at, list);
    }
  }
  return byPosition;
}

const quote = (lexeme: string) => `'${lexeme.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;

/** A vector's text form from lexeme → bucket → how many texts of it (capped). */
function vectorText(words: Map<string, Map<Bucket, number>>): string {
  const entries: string[] = [];
  for (const [lexeme, buckets] of words) {
    const positions: string[] = [];
    for (const [bucket, count] of buckets)
      for (let i = 0; i < count; i++)
        positions.push(`${BUCKET_BASE[bucket] + i}${bucket === 'N' || bucket === 'D' ? '' : bucket}`);
    entries.push(`${quote(lexeme)}:${positions.join(',')}`);
  }
  return entries.join(' ');
}

interface Vectors {
  words: Map<string, Map<Bucket, number>>;
  notes: Map<string, Map<Bucket, number>>;
  pairs: Map<string, Map<Bucket, number>>;
  notePairs: Map<string, Map<Bucket, number>>;
}

function bucketOf(kind: string, side: string | null): Bucket {
  if (kind === 'note') return 'N';
  if (kind === 'title') return WEIGHTS.title;
  if (side === 'visitor') return WEIGHTS.visitor;
  if (side === 'operator') return WEIGHTS.operator;
  return WEIGHTS.system;
}

/** A live document's words as the index keeps them (`tsv` in tsvector's text form). */
export interface DocumentWords {
  conversation_id: string;
  kind: string;
  side: string | null;
  tsv: string;
}

/** The four vectors (text form) of each conversation, from its live documents. */
export function vectorsOf(
  conversationIds: readonly string[],
  documents: readonly DocumentWords[],
): { conversation_id: string; tsv: string; note_tsv: string; phrase_tsv: string; note_phrase_tsv: string }[] {
  const vectors = new Map<string, Vectors>(
    conversationIds.map((id) => [
      id,
      { words: new Map(), notes: new Map(), pairs: new Map(), notePairs: new Map() },
    ]),
  );
  const add = (into: Map<string, Map<Bucket, number>>, lexeme: string, bucket: Bucket, cap: number) => {
    const buckets = into.get(lexeme) ?? new Map<Bucket, number>();
    buckets.set(bucket, Math.min(cap, (buckets.get(bucket) ?? 0) + 1));
    into.set(lexeme, buckets);
  };
  for (const row of documents) {
    const target = vectors.get(row.conversation_id);
    if (!target) continue;
    const bucket = bucketOf(row.kind, row.side);
    const note = bucket === 'N';
    const byPosition = parseVector(row.tsv);
    const seen = new Set<string>();
    const pairs = new Set<string>();
    for (const [position, lexemes] of byPosition) {
      for (const lexeme of lexemes) seen.add(lexeme);
      const next = byPosition.get(position + 1);
      if (next) for (const a of lexemes) for (const b of next) pairs.add(`${a} ${b}`);
    }
    for (const lexeme of seen) add(note ? target.notes : target.words, lexeme, bucket, TERM_FREQUENCY_CAP);
    for (const pair of pairs) add(note ? target.notePairs : target.pairs, pair, bucket, 1);
  }
  return [...vectors].map(([conversationId, v]) => ({
    conversation_id: conversationId,
    tsv: vectorText(v.words),
    note_tsv: vectorText(v.notes),
    phrase_tsv: vectorText(v.pairs),
    note_phrase_tsv: vectorText(v.notePairs),
  }));
}

/** Recomputes the vectors of these conversations of one organization from their live documents. */
export async function writeConversationTerms(
  db: pg.Pool | pg.PoolClient | pg.Client,
  orgId: string,
  conversationIds: readonly string[],
): Promise<void> {
  if (conversationIds.length === 0) return;
  const { rows } = await db.query<DocumentWords>(
    `SELECT conversation_id, kind, side, tsv::text AS tsv FROM search_document
     WHERE org_id = $1 AND conversation_id = ANY($2::text[]) AND NOT deleted AND tsv IS NOT NULL`,
    [orgId, conversationIds],
  );
  await db.query(
    `UPDATE search_conversation c
     SET tsv = n.tsv::tsvector, note_tsv = n.note_tsv::tsvector, phrase_tsv = n.phrase_tsv::tsvector,
       note_phrase_tsv = n.note_phrase_tsv::tsvector
     FROM jsonb_to_recordset($2::jsonb) AS n(conversation_id text, tsv text, note_tsv text, phrase_tsv text,
       note_phrase_tsv text)
     WHERE c.org_id = $1 AND c.conversation_id = n.conversation_id
       AND (c.tsv IS DISTINCT FROM n.tsv::tsvector OR c.note_tsv IS DISTINCT FROM n.note_tsv::tsvector
         OR c.phrase_tsv IS DISTINCT FROM n.phrase_tsv::tsvector
         OR c.note_phrase_tsv IS DISTINCT FROM n.note_phrase_tsv::tsvector)`,
    [orgId, JSON.stringify(vectorsOf(conversationIds, rows))],
  );
}
