import { ValidationError } from '../errors';

/**
 * The search query language of `GET /api/conversations/search` (contract.md, "Search (+)"): a
 * recursive-descent parser into a small tree. OR binds loosest, then AND (juxtaposition or `AND`),
 * then `-`/`NOT`; parentheses group, at most 4 levels deep. Every error is a 422 naming what is
 * wrong and its character offset (from 0).
 *
 *   query   := or
 *   or      := and ("OR" and)*
 *   and     := unary (["AND"] unary)*
 *   unary   := ("-" | "NOT") unary | primary
 *   primary := "(" or ")" | '"' phrase '"' | filter | word | word "*"
 *   filter  := name (":" | ">" | "<") (value | '"' value '"')
 */

export const MAX_QUERY_LENGTH = 1000;
export const MAX_CLAUSES = 50;
export const MAX_DEPTH = 4;
export const MIN_PREFIX = 2;

export type FilterName =
  | 'status'
  | 'priority'
  | 'tag'
  | 'operator'
  | 'team'
  | 'visitor'
  | 'from'
  | 'in'
  | 'created'
  | 'updated'
  | 'cf';

export type QueryNode =
  | { type: 'and'; items: QueryNode[] }
  | { type: 'or'; items: QueryNode[] }
  | { type: 'not'; item: QueryNode; offset: number }
  | { type: 'word'; text: string; offset: number }
  | { type: 'prefix'; text: string; offset: number }
  | { type: 'phrase'; text: string; offset: number }
  | {
      type: 'filter';
      name: FilterName;
      /** The custom field's name, for `cf.<name>`. */
      field?: string;
      op: ':' | '>' | '<';
      value: string;
      offset: number;
    };

export type TextNode = Extract<QueryNode, { type: 'word' | 'prefix' | 'phrase' }>;
export type FilterNode = Extract<QueryNode, { type: 'filter' }>;

export class QuerySyntaxError extends ValidationError {
  constructor(message: string, offset: number) {
    super(
      `Invalid query: ${message} at offset ${offset}`,
      { q: `${message} at offset ${offset}` },
      { offset },
    );
  }
}

const STATUSES = ['open', 'pending', 'snoozed', 'closed'];
const PRIORITIES = ['low', 'normal', 'high', 'urgent'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const FILTER_NAMES: readonly string[] = [
  'status',
  'priority',
  'tag',
  'operator',
  'team',
  'visitor',
  'from',
  'in',
  'created',
  'updated',
];
/** A word made of letters and digits only: what may stand before `*`. */
const PREFIX_WORD = /^[\p{L}\p{N}]+$/u;
const isSpace = (char: string | undefined) => char !== undefined && /\s/u.test(char);
const isBoundary = (char: string | undefined) =>
  char === undefined || isSpace(char) || char === '(' || char === ')' || char === '"';

/** Checks and normalizes a filter's value; the error names the filter. */
function checkFilter(node: FilterNode, valueOffset: number): FilterNode {
  const { name, op } = node;
  const fail = (message: string, offset = valueOffset) => {
    throw new QuerySyntaxError(message, offset);
  };
  const label = name === 'cf' ? `cf.${node.field}` : name;
  if ((name === 'created' || name === 'updated') !== (op !== ':')) {
    fail(
      name === 'created' || name === 'updated'
        ? `the filter "${label}" takes > or < followed by a date`
        : `the filter "${label}" takes ":" and a value, not "${op}"`,
      node.offset,
    );
  }
  const value = node.value;
  if (value === '') fail(`the filter "${label}" has no value`);
  const oneOf = (allowed: readonly string[]) => {
    const lower = value.toLowerCase();
    if (!allowed.includes(lower))
      fail(`invalid value "${value}" for "${label}" (one of ${allowed.join(', ')})`);
    return { ...node, value: lower };
  };
  const uuid = (orNone: boolean) => {
    if (orNone && value.toLowerCase() === 'none') return { ...node, value: 'none' };
    if (!UUID.test(value))
      fail(`invalid value "${value}" for "${label}" (a UUID${orNone ? ' or none' : ''})`);
    return { ...node, value: value.toLowerCase() };
  };
  switch (name) {
    case 'status':
      return oneOf(STATUSES);
    case 'priority':
      return oneOf(PRIORITIES);
    case 'from':
      return oneOf(['visitor', 'operator']);
    case 'in':
      return oneOf(['messages', 'notes', 'title']);
    case 'operator':
    case 'team':
      return uuid(true);
    case 'visitor':
      return uuid(false);
    case 'created':
    case 'updated': {
      const instant = DATE.test(value) ? `${value}T00:00:00Z` : INSTANT.test(value) ? value : undefined;
      const ms = instant ? Date.parse(instant) : Number.NaN;
      if (
        !instant ||
        Number.isNaN(ms) ||
        (DATE.test(value) && new Date(ms).toISOString().slice(0, 10) !== value)
      )
        fail(`invalid date "${value}" for "${label}${op}" (2026-11-01 or an ISO 8601 instant)`);
      return { ...node, value: new Date(ms).toISOString() };
    }
    default:
      return node;
  }
}

class Parser {
  private pos = 0;
  private clauses = 0;

  constructor(private readonly text: string) {}

  parse(): QueryNode {
    this.skipSpace();
    if (this.pos >= this.text.length) throw new QuerySyntaxError('the query is empty', 0);
    const node = this.or(0);
    this.skipSpace();
    if (this.pos < this.text.length) {
      // Only an unmatched ")" stops the top level early.
      throw new QuerySyntaxError('unmatched ")"', this.pos);
    }
    return node;
  }

  private skipSpace(): void {
    while (isSpace(this.text[this.pos])) this.pos++;
  }

  /** The keyword at the current position (a whole token), if it is one. */
  private keyword(word: 'OR' | 'AND' | 'NOT'): boolean {
    return this.text.startsWith(word, this.pos) && isBoundary(this.text[this.pos + word.length]);
  }

  private atEnd(): boolean {
    this.skipSpace();
    return this.pos >= this.text.length || this.text[this.pos] === ')';
  }

  private or(depth: number): QueryNode {
    const items = [this.and(depth)];
    for (;;) {
      this.skipSpace();
      if (!this.keyword('OR')) break;
      const at = this.pos;
      this.pos += 2;
      if (this.atEnd() || this.keyword('OR')) throw new QuerySyntaxError('OR needs a clause after it', at);
      items.push(this.and(depth));
    }
    return items.length === 1 ? (items[0] as QueryNode) : { type: 'or', items };
  }

  private and(depth: number): QueryNode {
    const items: QueryNode[] = [];
    for (;;) {
      this.skipSpace();
      if (this.pos >= this.text.length || this.text[this.pos] === ')' || this.keyword('OR')) break;
      if (this.keyword('AND')) {
        const at = this.pos;
        if (items.length === 0) throw new QuerySyntaxError('AND needs a clause before it', at);
        this.pos += 3;
        if (this.atEnd() || this.keyword('OR') || this.keyword('AND'))
          throw new QuerySyntaxError('AND needs a clause after it', at);
        continue;
      }
      items.push(this.unary(depth));
    }
    if (items.length === 0) {
      const what = this.keyword('OR') ? 'OR needs a clause before it' : 'a clause is missing';
      throw new QuerySyntaxError(what, this.pos);
    }
    return items.length === 1 ? (items[0] as QueryNode) : { type: 'and', items };
  }

  private unary(depth: number): QueryNode {
    const at = this.pos;
    if (this.text[this.pos] === '-') {
      const next = this.text[this.pos + 1];
      if (next === undefined || isSpace(next) || next === ')')
        throw new QuerySyntaxError('"-" needs a clause right after it', at);
      this.pos++;
      return { type: 'not', item: this.unary(depth), offset: at };
    }
    if (this.keyword('NOT')) {
      this.pos += 3;
      if (this.atEnd() || this.keyword('OR') || this.keyword('AND'))
        throw new QuerySyntaxError('NOT needs a clause after it', at);
      this.skipSpace();
      return { type: 'not', item: this.unary(depth), offset: at };
    }
    return this.primary(depth);
  }

  private count(at: number): void {
    this.clauses++;
    if (this.clauses > MAX_CLAUSES)
      throw new QuerySyntaxError(`more than ${MAX_CLAUSES} terms and filters`, at);
  }

  /** A quoted string starting at the current `"`; returns its text, the position after the closing quote. */
  private quoted(): string {
    const open = this.pos;
    const close = this.text.indexOf('"', open + 1);
    if (close < 0) throw new QuerySyntaxError('unclosed quote', open);
    this.pos = close + 1;
    return this.text.slice(open + 1, close);
  }

  private primary(depth: number): QueryNode {
    const at = this.pos;
    const char = this.text[at];
    if (char === '(') {
      if (depth + 1 > MAX_DEPTH)
        throw new QuerySyntaxError(`parentheses nested deeper than ${MAX_DEPTH} levels`, at);
      this.pos++;
      if (this.atEnd() && this.text[this.pos] === ')') throw new QuerySyntaxError('empty parentheses', at);
      if (this.pos >= this.text.length) throw new QuerySyntaxError('unclosed "("', at);
      const inner = this.or(depth + 1);
      this.skipSpace();
      if (this.text[this.pos] !== ')') throw new QuerySyntaxError('unclosed "("', at);
      this.pos++;
      return inner;
    }
    if (char === ')') throw new QuerySyntaxError('unmatched ")"', at);
    if (char === '"') {
      const text = this.quoted().trim();
      if (text === '') throw new QuerySyntaxError('empty phrase', at);
      this.count(at);
      return { type: 'phrase', text, offset: at };
    }
    // A token: up to whitespace, a parenthesis or a quote (a filter's quoted value follows its name).
    let end = at;
    while (end < this.text.length && !isBoundary(this.text[end])) end++;
    const token = this.text.slice(at, end);
    const filter = /^(cf\.[^:<>]*|[A-Za-z]+)([:<>])/.exec(token);
    if (filter?.[1] && filter[2]) {
      const rawName = filter[1];
      const lowerName = rawName.toLowerCase();
      const isField = lowerName.startsWith('cf.');
      if (!isField && !FILTER_NAMES.includes(lowerName))
        throw new QuerySyntaxError(`unknown filter "${rawName}"`, at);
      const field = isField ? rawName.slice(3) : undefined;
      if (isField && !field) throw new QuerySyntaxError('"cf." needs a custom field name', at);
      const valueOffset = at + filter[0].length;
      let value: string;
      if (valueOffset === end && this.text[end] === '"') {
        this.pos = end;
        value = this.quoted();
        if (!isBoundary(this.text[this.pos]) && this.pos < this.text.length)
          throw new QuerySyntaxError('unexpected text after a quoted value', this.pos);
      } else {
        value = token.slice(filter[0].length);
        this.pos = end;
      }
      this.count(at);
      return checkFilter(
        {
          type: 'filter',
          name: isField ? 'cf' : (lowerName as FilterName),
          ...(field !== undefined && { field }),
          op: filter[2] as ':' | '>' | '<',
          value,
          offset: at,
        },
        valueOffset,
      );
    }
    this.pos = end;
    this.count(at);
    const star = token.indexOf('*');
    if (star >= 0) {
      if (star !== token.length - 1) throw new QuerySyntaxError('"*" may only end a word', at + star);
      const stem = token.slice(0, -1);
      if ([...stem].length < MIN_PREFIX || !PREFIX_WORD.test(stem))
        throw new QuerySyntaxError(`a prefix needs at least ${MIN_PREFIX} letters or digits before "*"`, at);
      return { type: 'prefix', text: stem, offset: at };
    }
    return { type: 'word', text: token, offset: at };
  }
}

/** Parses `q`; a query that breaks a rule of the language throws a 422 (`details.field` = `q`). */
export function parseQuery(q: string): QueryNode {
  if (q.length < 1 || q.length > MAX_QUERY_LENGTH)
    throw new QuerySyntaxError(`the query must be 1 to ${MAX_QUERY_LENGTH} characters long`, 0);
  return new Parser(q).parse();
}

/** The query's text leaves (words, prefixes, phrases), wherever they stand. */
export function textLeaves(node: QueryNode): TextNode[] {
  switch (node.type) {
    case 'and':
    case 'or':
      return node.items.flatMap(textLeaves);
    case 'not':
      return textLeaves(node.item);
    case 'filter':
      return [];
    default:
      return [node];
  }
}

/** Text leaves that count towards a match (not under a negation): what is highlighted and ranked. */
export function positiveTextLeaves(node: QueryNode, negated = false): TextNode[] {
  switch (node.type) {
    case 'and':
    case 'or':
      return node.items.flatMap((item) => positiveTextLeaves(item, negated));
    case 'not':
      return positiveTextLeaves(node.item, !negated);
    case 'filter':
      return [];
    default:
      return negated ? [] : [node];
  }
}
