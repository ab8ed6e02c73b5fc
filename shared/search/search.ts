import { decodeCursor, encodeCursor, malformedCursor } from '../db/cursor';
import type { DocumentKind } from './projection';
import {
  type FilterNode,
  parseQuery,
  positiveTextLeaves,
  type QueryNode,
  QuerySyntaxError,
  type TextNode,
  textLeaves,
} from './query';
import { isMatch, snippetOf, termsOfTsquery, wordsOf } from './snippet';
import { WEIGHTS } from './terms';

/**
 * The index's connection pool and its driver (`pg`), loaded by the first search, not at module load:
 * evaluating `pg` (which also loads `node:dns`) was ~20 M of the ~550 M instructions of the
 * function's cold import (docs/decisions.md, "node:http and ICU at import"), and a request refused
 * before it searches (401, 403, 422, a malformed cursor) never needs it.
 */
let connection: Promise<typeof import('./connection')> | undefined;
async function searchPool() {
  connection ??= import('./connection');
  return (await connection).searchPool();
}

/** `total` is exact up to this many conversations; above it, this number and `totalCapped`. */
export const TOTAL_CAP = 10_000;
/** Matches returned per conversation, best first. */
export const MATCHES_PER_HIT = 3;
/**
 * Relevance ranks the newest this many matching conversations; older matches follow them, newest
 * first, with score 0 (docs/decisions.md, "Search: one row per conversation"). Every match is still
 * found, counted and paged.
 */
export const RANK_WINDOW = 1_000;

export type SearchSort = 'relevance' | 'newest' | 'oldest';

export interface SearchRequest {
  orgId: string;
  q: string;
  sort?: SearchSort | undefined;
  limit: number;
  cursor?: string | undefined;
  /** A visitor: their own conversations only, and never notes. */
  visitorId?: string | undefined;
  /** The oldest `lastMessageAt` the organization still shows. */
  since?: string | undefined;
  /** Where `total` stops counting (TOTAL_CAP; lower in tests of the cap). */
  totalCap?: number | undefined;
  /** How many of the newest matches relevance ranks (RANK_WINDOW; lower in tests of the window). */
  rankWindow?: number | undefined;
}

export interface SearchMatch {
  kind: DocumentKind;
  id: string | null;
  snippet: string;
  createdAt: string;
}

export interface SearchHitRef {
  conversationId: string;
  score: number | null;
  matches: SearchMatch[];
}

export interface SearchResult {
  hits: SearchHitRef[];
  nextCursor: string | null;
  total: number;
  totalCapped: boolean;
}

/** Parameters of one statement: `$n` placeholders in order. */
class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** Where text terms must match: kinds of text, and the sender's side of messages. */
interface Scope {
  kinds: DocumentKind[];
  sides: ('visitor' | 'operator')[] | undefined;
}

const ALL_KINDS: DocumentKind[] = ['title', 'message', 'note'];

/**
 * `in:` and `from:` say where the text terms of the whole query must match: they may stand only
 * as plain clauses of the top level (not negated, not under OR).
 */
function scopeOf(root: QueryNode, visitor: boolean): { scope: Scope; rest: QueryNode | undefined } {
  const top = root.type === 'and' ? root.items : [root];
  const isScope = (node: QueryNode): node is FilterNode =>
    node.type === 'filter' && (node.name === 'in' || node.name === 'from');
  const misplaced = (node: QueryNode): void => {
    if (isScope(node))
      throw new QuerySyntaxError(
        `"${node.name}:" applies to the whole query: it cannot be negated or combined with OR`,
        node.offset,
      );
    if (node.type === 'and' || node.type === 'or') node.items.forEach(misplaced);
    if (node.type === 'not') misplaced(node.item);
  };
  const kinds = new Set<DocumentKind>();
  const sides = new Set<'visitor' | 'operator'>();
  const rest: QueryNode[] = [];
  for (const node of top) {
    if (!isScope(node)) {
      misplaced(node);
      rest.push(node);
      continue;
    }
    if (node.name === 'in') {
      if (node.value === 'notes' && visitor)
        throw new QuerySyntaxError('"in:notes" is not available to visitors', node.offset);
      kinds.add(node.value === 'messages' ? 'message' : node.value === 'notes' ? 'note' : 'title');
    } else sides.add(node.value as 'visitor' | 'operator');
  }
  let allowed = kinds.size > 0 ? [...kinds] : ALL_KINDS;
  if (visitor) allowed = allowed.filter((kind) => kind !== 'note');
  if (sides.size > 0) allowed = allowed.filter((kind) => kind === 'message');
  return {
    scope: { kinds: allowed, sides: sides.size > 0 ? [...sides] : undefined },
    rest: rest.length === 0 ? undefined : rest.length === 1 ? rest[0] : { type: 'and', items: rest },
  };
}

/** The SQL that limits documents to the scope (`d` is search_document). */
function scopeSql(scope: Scope, params: Params): string {
  let sql = `d.kind = ANY(${params.add(scope.kinds)}::text[])`;
  if (scope.sides) sql += ` AND d.side = ANY(${params.add(scope.sides)}::text[])`;
  return sql;
}

/** The tsquery function of a text leaf, applied to the organization's configuration. */
function tsqueryFunction(leaf: TextNode): string {
  return leaf.type === 'phrase'
    ? 'phraseto_tsquery'
    : leaf.type === 'prefix'
      ? 'to_tsquery'
      : 'plainto_tsquery';
}

/** A prefix as to_tsquery reads it: one quoted word, a prefix match. */
const tsqueryInput = (leaf: TextNode): string =>
  leaf.type === 'prefix' ? `'${leaf.text.replaceAll("'", "''")}':*` : leaf.text;

/**
 * One round trip for what the query needs from the index before it runs: the organization's text
 * search configuration and each text leaf as a tsquery in it (stop words vanish: an empty leaf).
 */
async function analyze(
  orgId: string,
  leaves: readonly TextNode[],
): Promise<{ config: string; tsqueries: string[] }> {
  const params = new Params();
  const org = params.add(orgId);
  // A prefix is matched against the words as written (see writer.ts): stemming it would miss
  // words whose stem is shorter than the prefix.
  const parts = leaves.map(
    (leaf) =>
      `${tsqueryFunction(leaf)}(${leaf.type === 'prefix' ? "'search_simple'::regconfig" : 'cfg.c'}, ${params.add(tsqueryInput(leaf))})::text`,
  );
  const { rows } = await (await searchPool()).query<{ config: string; tsqueries: string[] }>(
    `SELECT cfg.c::text AS config, ARRAY[${parts.length ? parts.join(', ') : ''}]::text[] AS tsqueries
     FROM (SELECT coalesce((SELECT config FROM search_org WHERE org_id = ${org}), 'search_simple'::regconfig) AS c) cfg`,
    params.values,
  );
  const row = rows[0];
  return { config: row?.config ?? 'search_simple', tsqueries: row?.tsqueries ?? [] };
}

interface Compiled {
  sql: string;
}

/** One lexeme, maybe a prefix (`'ship':*`): what a conversation's vectors answer exactly. */
const SINGLE_LEXEME = /^'(?:''|[^'])*'(?::\*)?$/;
/** A phrase as phraseto_tsquery gives it when every word counts: `'a' <-> 'b' <-> …`. */
const PHRASE_CHAIN = /^'(?:''|[^'])*'(?: <-> '(?:''|[^'])*')+$/;
const LEXEMES = /'((?:''|[^'])*)'/g;

/** The weights of `tsv` (A title, B system, C visitor, D operator message) a scope covers. */
function weightsOf(scope: Scope): string {
  const weights: string[] = [];
  if (scope.kinds.includes('title') && !scope.sides) weights.push(WEIGHTS.title);
  if (scope.kinds.includes('message')) {
    if (!scope.sides) weights.push(WEIGHTS.system, WEIGHTS.visitor, WEIGHTS.operator);
    else for (const side of scope.sides) weights.push(WEIGHTS[side]);
  }
  return weights.sort().join('');
}

/** A tsquery with its lexemes restricted to weights (`'refund':CD`); all four: as it is. */
function restricted(tsquery: string, weights: string): string {
  if (weights === 'ABCD') return tsquery;
  return tsquery.replace(
    /('(?:''|[^'])*')(:\*)?/g,
    (_, lexeme: string, star?: string) => `${lexeme}:${star ? '*' : ''}${weights}`,
  );
}

interface CompileContext {
  orgParam: string;
  params: Params;
  scope: Scope;
  /** The scope as SQL on documents `d`, bound on first use. */
  docScope: () => string;
  tsqueryOf: Map<TextNode, string>;
}

/**
 * A text leaf on a conversation `c`. Words and prefixes are one lexeme each: the conversation's
 * vectors answer them exactly (a GIN lookup, a weight per kind of text for the scope). Phrases
 * of two or more words are pairs of adjacent words in `phrase_tsv`: exact for two words; a longer
 * one also matched in the documents of the conversations its pairs found. Anything else (a word
 * the parser splits, a phrase with stop words inside) is matched in the documents, as before.
 */
function leafSql(tsquery: string, context: CompileContext): string {
  const { params, scope } = context;
  const weights = weightsOf(scope);
  const notes = scope.kinds.includes('note');
  const onVectors = (publicColumn: string, noteColumn: string, query: string) => {
    const parts: string[] = [];
    if (weights) parts.push(`c.${publicColumn} @@ ${params.add(restricted(query, weights))}::tsquery`);
    if (notes) parts.push(`c.${noteColumn} @@ ${params.add(query)}::tsquery`);
    return parts.length ? `(${parts.join(' OR ')})` : 'false';
  };
  if (SINGLE_LEXEME.test(tsquery)) return onVectors('tsv', 'note_tsv', tsquery);
  const inDocuments = () =>
    `EXISTS (SELECT 1 FROM search_document d WHERE d.org_id = ${context.orgParam} AND d.conversation_id = c.conversation_id AND NOT d.deleted AND d.tsv @@ ${params.add(tsquery)}::tsquery AND ${context.docScope()})`;
  if (PHRASE_CHAIN.test(tsquery)) {
    const lexemes = [...tsquery.matchAll(LEXEMES)].map((match) => (match[1] ?? '').replaceAll("''", "'"));
    const pairs = lexemes.slice(1).map((lexeme, i) => `'${`${lexemes[i]} ${lexeme}`.replaceAll("'", "''")}'`);
    const onPairs = onVectors('phrase_tsv', 'note_phrase_tsv', [...new Set(pairs)].join(' & '));
    return lexemes.length === 2 ? onPairs : `(${onPairs} AND ${inDocuments()})`;
  }
  return `c.conversation_id IN (SELECT d.conversation_id FROM search_document d WHERE d.org_id = ${context.orgParam} AND NOT d.deleted AND d.tsv @@ ${params.add(tsquery)}::tsquery AND ${context.docScope()})`;
}

/**
 * The condition on a conversation `c` for a node. A text leaf holds when some text of the
 * conversation, within the scope, matches it; a leaf that analysis emptied (only stop words)
 * holds everywhere.
 */
function compile(node: QueryNode, context: CompileContext): Compiled {
  const { params } = context;
  switch (node.type) {
    case 'and':
      return { sql: `(${node.items.map((item) => compile(item, context).sql).join(' AND ')})` };
    case 'or':
      return { sql: `(${node.items.map((item) => compile(item, context).sql).join(' OR ')})` };
    case 'not':
      return { sql: `(NOT coalesce(${compile(node.item, context).sql}, false))` };
    case 'word':
    case 'prefix':
    case 'phrase': {
      const tsquery = context.tsqueryOf.get(node) ?? '';
      if (tsquery === '') return { sql: 'true' };
      return { sql: leafSql(tsquery, context) };
    }
    case 'filter':
      return { sql: filterSql(node, params) };
  }
}

function filterSql(node: FilterNode, params: Params): string {
  const value = node.value;
  switch (node.name) {
    case 'status':
      return `c.status = ${params.add(value)}`;
    case 'priority':
      return `c.priority = ${params.add(value)}`;
    case 'tag':
      return `${params.add(value)} = ANY(c.tags)`;
    case 'operator':
      return value === 'none' ? 'c.operator_id IS NULL' : `c.operator_id = ${params.add(value)}`;
    case 'team':
      return value === 'none' ? 'c.team_id IS NULL' : `c.team_id = ${params.add(value)}`;
    case 'visitor':
      return `c.visitor_id = ${params.add(value)}`;
    case 'created':
    case 'updated':
      return `c.${node.name}_at ${node.op} ${params.add(value)}::timestamptz`;
    case 'cf': {
      const name = params.add(node.field ?? '');
      const given = params.add(value);
      // A string, number or boolean equal to the value as text, or a list that holds it.
      return `(c.custom_fields ->> ${name} = ${given} OR (jsonb_typeof(c.custom_fields -> ${name}) = 'array' AND c.custom_fields -> ${name} @> jsonb_build_array(${given}::text)))`;
    }
    default:
      // in: and from: were taken out as the scope.
      return 'true';
  }
}

interface SearchCursor {
  s?: number;
  l: string;
  i: string;
}

/** Runs a search; the conversations themselves are read by the caller from the table. */
export async function search(request: SearchRequest): Promise<SearchResult> {
  const root = parseQuery(request.q);
  const { scope, rest } = scopeOf(root, request.visitorId !== undefined);
  const leaves = rest ? textLeaves(rest) : [];
  const sort: SearchSort = request.sort ?? (leaves.length > 0 ? 'relevance' : 'newest');
  const queryId = JSON.stringify(['search', request.q, sort]);
  let after: SearchCursor | undefined;
  if (request.cursor) {
    const decoded = decodeCursor(request.cursor, request.orgId, queryId) as Partial<SearchCursor>;
    if (
      typeof decoded.l !== 'string' ||
      typeof decoded.i !== 'string' ||
      (sort === 'relevance' && typeof decoded.s !== 'number')
    )
      throw malformedCursor();
    after = decoded as SearchCursor;
  }

  const positive = rest ? positiveTextLeaves(rest) : [];
  const { config, tsqueries } = await analyze(request.orgId, [...leaves, ...positive]);
  const tsqueryOf = new Map<TextNode, string>(leaves.map((leaf, i) => [leaf, tsqueries[i] ?? '']));
  const positiveTsqueries = positive.map((_, i) => tsqueries[leaves.length + i] ?? '').filter(Boolean);
  // What ranks documents and picks the matches shown: any positive term.
  const anyTerm = positiveTsqueries.length
    ? positiveTsqueries.map((text) => `(${text})`).join(' | ')
    : undefined;

  const params = new Params();
  const orgParam = params.add(request.orgId);
  // Bound on first use: a parameter the statement never names has no type, and PostgreSQL refuses
  // the statement (a query of filters only has no text term to scope).
  let scoped: string | undefined;
  const docScope = () => {
    scoped ??= scopeSql(scope, params);
    return scoped;
  };
  const where = [`c.org_id = ${orgParam}`, 'NOT c.deleted'];
  if (request.visitorId) where.push(`c.visitor_id = ${params.add(request.visitorId)}`);
  if (request.since) where.push(`c.last_message_at >= ${params.add(request.since)}::timestamptz`);
  if (rest) where.push(compile(rest, { orgParam, params, scope, docScope, tsqueryOf }).sql);
  const matching = where.join(' AND ');

  const relevance = sort === 'relevance';
  let scoreSql = '0::real';
  if (relevance && anyTerm) {
    // ts_rank over the conversation's vectors: a weight per kind of text in scope (titles count
    // most), none for the kinds out of it; notes, when in scope, rank as messages.
    const weights = weightsOf(scope);
    const weightOf = (weight: string, value: number) => (weights.includes(weight) ? value : 0);
    const rankWeights = `{${weightOf(WEIGHTS.operator, 0.4)},${weightOf(WEIGHTS.visitor, 0.4)},${weightOf(WEIGHTS.system, 0.4)},${weightOf(WEIGHTS.title, 1)}}`;
    const any = params.add(anyTerm);
    const parts: string[] = [];
    if (weights) parts.push(`ts_rank('${rankWeights}'::real[], coalesce(c.tsv, ''), ${any}::tsquery)`);
    if (scope.kinds.includes('note'))
      parts.push(`ts_rank('{0.4,0.4,0.4,0.4}'::real[], coalesce(c.note_tsv, ''), ${any}::tsquery)`);
    if (parts.length) scoreSql = `(${parts.join(' + ')})::real`;
  }

  const limit = params.add(request.limit + 1);
  const totalCap = request.totalCap ?? TOTAL_CAP;
  const cap = params.add(totalCap + 1);
  // The exact count stops at the cap: the conversations' GIN indexes answer it without ranking.
  const countSql = `(SELECT count(*) FROM (SELECT 1 FROM search_conversation c WHERE ${matching} LIMIT ${cap}) capped)`;
  let statement: string;
  if (relevance) {
    // The newest RANK_WINDOW matches, ranked; the older ones after them, newest first, score 0.
    // The order is (score, last_message_at, conversation_id), descending, across both.
    const rankWindow = request.rankWindow ?? RANK_WINDOW;
    const window = params.add(rankWindow);
    const edge = params.add(rankWindow - 1);
    let rankedAfter = 'true';
    let restAfter = 'true';
    if (after) {
      const s = params.add(after.s);
      const l = params.add(after.l);
      const i = params.add(after.i);
      rankedAfter = `(w.score, w.last_message_at, w.conversation_id) < (${s}::real, ${l}::timestamptz, ${i})`;
      // A cursor with a score above 0 is within the window: the rest is all still to come.
      if (!(Number(after.s) > 0))
        restAfter = `(c.last_message_at, c.conversation_id) < (${l}::timestamptz, ${i})`;
    }
    statement = `WITH w AS MATERIALIZED (
         SELECT c.conversation_id, c.last_message_at, ${scoreSql} AS score
         FROM search_conversation c WHERE ${matching}
         ORDER BY c.last_message_at DESC, c.conversation_id DESC LIMIT ${window}
       ), edge AS (
         SELECT last_message_at, conversation_id FROM w
         ORDER BY last_message_at DESC, conversation_id DESC OFFSET ${edge} LIMIT 1
       )
       SELECT ${countSql} AS total, p.conversation_id, p.last_message_at, p.score
       FROM (SELECT 1) one LEFT JOIN LATERAL (
         SELECT * FROM (
           (SELECT w.conversation_id, w.last_message_at, w.score FROM w WHERE ${rankedAfter}
            ORDER BY w.score DESC, w.last_message_at DESC, w.conversation_id DESC LIMIT ${limit})
           UNION ALL
           (SELECT c.conversation_id, c.last_message_at, 0::real FROM search_conversation c
            WHERE ${matching} AND EXISTS (SELECT 1 FROM edge)
              AND (c.last_message_at, c.conversation_id)
                < ((SELECT last_message_at FROM edge), (SELECT conversation_id FROM edge))
              AND ${restAfter}
            ORDER BY c.last_message_at DESC, c.conversation_id DESC LIMIT ${limit})
         ) both_parts ORDER BY score DESC, last_message_at DESC, conversation_id DESC LIMIT ${limit}
       ) p ON true`;
  } else {
    const newest = sort === 'newest';
    let pageWhere = 'true';
    if (after) {
      const l = params.add(after.l);
      const i = params.add(after.i);
      pageWhere = `(c.last_message_at, c.conversation_id) ${newest ? '<' : '>'} (${l}::timestamptz, ${i})`;
    }
    const direction = newest ? 'DESC' : 'ASC';
    statement = `SELECT ${countSql} AS total, p.conversation_id, p.last_message_at, NULL::real AS score
       FROM (SELECT 1) one LEFT JOIN LATERAL (
         SELECT c.conversation_id, c.last_message_at FROM search_conversation c
         WHERE ${matching} AND ${pageWhere}
         ORDER BY c.last_message_at ${direction}, c.conversation_id ${direction} LIMIT ${limit}
       ) p ON true`;
  }
  const { rows } = await (await searchPool()).query<{
    total: string;
    conversation_id: string | null;
    last_message_at: Date | null;
    score: number | null;
  }>(statement, params.values);
  const totalCount = Number(rows[0]?.total ?? 0);
  const found = rows.filter((row) => row.conversation_id !== null);
  const page = found.slice(0, request.limit);
  const last = page.at(-1);
  const nextCursor =
    found.length > request.limit && last?.conversation_id && last.last_message_at
      ? encodeCursor(request.orgId, queryId, {
          ...(relevance ? { s: last.score ?? 0 } : {}),
          l: last.last_message_at.toISOString(),
          i: last.conversation_id,
        })
      : null;

  const ids = page.map((row) => row.conversation_id as string);
  const matches = anyTerm ? await matchesOf(request.orgId, ids, anyTerm, config, scope) : new Map();
  return {
    hits: page.map((row) => ({
      conversationId: row.conversation_id as string,
      score: relevance ? Number(row.score ?? 0) : null,
      matches: matches.get(row.conversation_id as string) ?? [],
    })),
    nextCursor,
    total: Math.min(totalCount, totalCap),
    totalCapped: totalCount > totalCap,
  };
}

/**
 * The best matches of each conversation of the page (at most 3, best first), with their snippets.
 * Two round trips: the documents, then the analysis of their words in the organization's
 * configuration, so that a highlighted word is one the index matched (stemmed, accents folded).
 */
async function matchesOf(
  orgId: string,
  conversationIds: readonly string[],
  anyTerm: string,
  config: string,
  scope: Scope,
): Promise<Map<string, SearchMatch[]>> {
  const result = new Map<string, SearchMatch[]>();
  if (conversationIds.length === 0) return result;
  const params = new Params();
  const org = params.add(orgId);
  const ids = params.add(conversationIds);
  const query = params.add(anyTerm);
  const scopeCondition = scopeSql(scope, params);
  const { rows } = await (await searchPool()).query<{
    conversation_id: string;
    kind: DocumentKind;
    doc_id: string;
    body: string;
    created_at: Date;
    query_text: string;
  }>(
    `SELECT conversation_id, kind, doc_id, body, created_at, querytree(${query}::tsquery) AS query_text FROM (
       SELECT d.conversation_id, d.kind, d.doc_id, d.body, d.created_at,
         row_number() OVER (PARTITION BY d.conversation_id
           ORDER BY ts_rank_cd(d.tsv, ${query}::tsquery) DESC, d.created_at DESC, d.doc_id DESC) AS rank
       FROM search_document d
       WHERE d.org_id = ${org} AND d.conversation_id = ANY(${ids}::text[]) AND NOT d.deleted
         AND d.tsv @@ ${query}::tsquery AND ${scopeCondition}
     ) ranked WHERE rank <= ${MATCHES_PER_HIT} ORDER BY conversation_id, rank`,
    params.values,
  );
  if (rows.length === 0) return result;
  const terms = termsOfTsquery([rows[0]?.query_text ?? anyTerm]);
  const distinct = [
    ...new Set(rows.flatMap((row) => wordsOf(row.body).map((word) => word.word.toLowerCase()))),
  ];
  const lexemes = new Map<string, string[]>();
  const unaccented = new Map<string, string>();
  if (distinct.length > 0) {
    const analyzed = await (await searchPool()).query<{ word: string; lexemes: string[]; plain: string }>(
      `SELECT w AS word, tsvector_to_array(to_tsvector($1::regconfig, w)) AS lexemes,
         unaccent(w) AS plain FROM unnest($2::text[]) AS w`,
      [config, distinct],
    );
    for (const row of analyzed.rows) {
      lexemes.set(row.word, row.lexemes);
      unaccented.set(row.word, row.plain.toLowerCase());
    }
  }
  const matched = (word: string) =>
    isMatch([...(lexemes.get(word) ?? []), unaccented.get(word) ?? word], terms);
  for (const row of rows) {
    const list = result.get(row.conversation_id) ?? [];
    list.push({
      kind: row.kind,
      id: row.kind === 'title' ? null : row.doc_id,
      snippet: snippetOf(row.body, matched),
      createdAt: row.created_at.toISOString(),
    });
    result.set(row.conversation_id, list);
  }
  return result;
}
