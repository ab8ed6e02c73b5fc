import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { eventually } from '../helpers/eventually';

/** GET /api/conversations/search: the PostgreSQL index fed by the table's stream (contract "Search (+)"). */
type Match = { kind: 'message' | 'note' | 'title'; id: string | null; snippet: string; createdAt: string };
type Hit = {
  conversation: { id: string; title: string; version: number };
  score: number | null;
  matches: Match[];
};
type Page = { data: Hit[]; nextCursor: string | null; total: number; totalCapped?: boolean };

const errorOf = (response: ApiResponse<unknown>) =>
  (response.body as { error: { code: string; message: string; details?: Record<string, unknown> } }).error;

let tenant: Tenant;
let visitor: { token: string; visitor: { id: string } };
/** A word no other test uses, so each test's conversations are the only ones its queries can find. */
const marker = () => `zq${crypto.randomUUID().replaceAll('-', '').slice(0, 10)}`;

const search = (
  q: string,
  options: { token?: string; sort?: string; limit?: number; cursor?: string } = {},
) => {
  const params = new URLSearchParams({ q });
  if (options.sort) params.set('sort', options.sort);
  if (options.limit) params.set('limit', String(options.limit));
  if (options.cursor) params.set('cursor', options.cursor);
  return call<Page>('GET', `/api/conversations/search?${params}`, { token: options.token ?? tenant.apiKey });
};

/** Polls a search until `done` holds (the index trails the table by a moment: 5 s at most). */
const searchUntil = (q: string, done: (page: Page) => boolean, options: Parameters<typeof search>[1] = {}) =>
  eventually(
    async () => (await search(q, options)).body,
    (page) => Array.isArray(page.data) && done(page),
    { timeoutMs: 8_000, intervalMs: 150 },
  );
const ids = (page: Page) => page.data.map((hit) => hit.conversation.id).sort();

async function conversation(
  message: string,
  options: { token?: string; title?: string; from?: string } = {},
): Promise<string> {
  const token = options.token ?? tenant.apiKey;
  const body: Record<string, unknown> = token === visitor.token ? {} : { visitorId: visitor.visitor.id };
  const created = await call<{ id: string }>('POST', '/api/conversations', { token, body });
  expect(created.status).toBe(201);
  if (options.title)
    expect(
      (
        await call('PATCH', `/api/conversations/${created.body.id}`, {
          token: tenant.apiKey,
          body: { title: options.title },
        })
      ).status,
    ).toBe(200);
  await post(created.body.id, message, options.from ?? visitor.token);
  return created.body.id;
}

async function post(conversationId: string, content: string, token = tenant.apiKey): Promise<string> {
  const posted = await call<{ id: string }>('POST', `/api/conversations/${conversationId}/messages`, {
    token,
    body: token === tenant.apiKey ? { content, operatorId: tenant.operatorId } : { content },
  });
  expect(posted.status, posted.text).toBe(201);
  return posted.body.id;
}

beforeAll(async () => {
  tenant = await createTenant();
  visitor = await createVisitor(tenant.widgetKey);
});

describe('GET /api/conversations/search', () => {
  it('finds a conversation by a word of a message within seconds, with a marked snippet', async () => {
    const word = marker();
    const id = await conversation(`Hello, my order ${word} never arrived`);
    const page = await searchUntil(word, (found) => found.total === 1);
    expect(ids(page)).toEqual([id]);
    expect(page.data[0]?.score).toBeTypeOf('number');
    expect(page.data[0]?.matches[0]).toMatchObject({
      kind: 'message',
      snippet: `Hello, my order <mark>${word}</mark> never arrived`,
    });
    expect(page.nextCursor).toBeNull();
  });
});

describe('what is searched, and by whom', () => {
  it('matches word forms of the organization language, phrases, prefixes, OR and NOT', async () => {
    const word = marker();
    const refunded = await conversation(`${word} the order was refunded yesterday`);
    const shipping = await conversation(`${word} shipping label printed`);
    await searchUntil(word, (page) => page.total === 2);
    expect(ids((await search(`${word} refunds`)).body)).toEqual([refunded]);
    expect(ids((await search(`${word} "was refunded"`)).body)).toEqual([refunded]);
    expect(ids((await search(`${word} "yesterday refunded"`)).body)).toEqual([]);
    expect(ids((await search(`${word} shipp*`)).body)).toEqual([shipping]);
    expect(ids((await search(`${word} (refund OR label)`)).body)).toEqual([refunded, shipping].sort());
    expect(ids((await search(`${word} -refund`)).body)).toEqual([shipping]);
  });

  it('hides notes from visitors and other organizations’ data from everyone', async () => {
    const word = marker();
    const own = await conversation(`${word} visible message`, { token: visitor.token });
    const noteWord = marker();
    expect(
      (
        await call('POST', `/api/conversations/${own}/notes`, {
          token: tenant.apiKey,
          body: { content: `note ${noteWord}` },
        })
      ).status,
    ).toBe(201);
    await searchUntil(noteWord, (page) => page.total === 1);
    expect((await search(noteWord, { token: visitor.token })).body.total).toBe(0);
    expect((await search(word, { token: visitor.token })).body.total).toBe(1);
    expect((await search(`in:notes ${noteWord}`, { token: visitor.token })).status).toBe(422);
    const other = await createTenant();
    expect((await search(word, { token: other.apiKey })).body).toMatchObject({ data: [], total: 0 });
  });

  it('follows edits and deletions of messages', async () => {
    const before = marker();
    const after = marker();
    const id = await conversation('opening line', { token: visitor.token });
    const messageId = await post(id, `typo ${before}`, visitor.token);
    await searchUntil(before, (page) => page.total === 1);
    expect(
      (
        await call('PATCH', `/api/conversations/${id}/messages/${messageId}`, {
          token: visitor.token,
          body: { content: `fixed ${after}` },
        })
      ).status,
    ).toBe(200);
    await searchUntil(after, (page) => page.total === 1);
    expect((await searchUntil(before, (page) => page.total === 0)).total).toBe(0);
    expect(
      (
        await call('POST', '/api/conversations/bulk-delete', {
          token: tenant.apiKey,
          body: { conversationIds: [id] },
        })
      ).status,
    ).toBeLessThan(300);
    expect((await searchUntil(after, (page) => page.total === 0)).total).toBe(0);
  });

  it('pages with a cursor bound to the query', async () => {
    const word = marker();
    for (let i = 0; i < 3; i++) await conversation(`${word} number ${i}`);
    await searchUntil(word, (page) => page.total === 3);
    const first = (await search(word, { limit: 2, sort: 'newest' })).body;
    expect(first.data).toHaveLength(2);
    expect(first.data[0]?.score).toBeNull();
    const second = (await search(word, { limit: 2, sort: 'newest', cursor: first.nextCursor ?? '' })).body;
    expect(second.data).toHaveLength(1);
    expect(second.nextCursor).toBeNull();
    expect(new Set([...ids(first), ...ids(second)]).size).toBe(3);
    expect(
      (await search(`${word} x`, { limit: 2, sort: 'newest', cursor: first.nextCursor ?? '' })).status,
    ).toBe(400);
  });
});

describe('query errors', () => {
  it.each([
    ['refund OR', 'OR needs a clause after it at offset 7', 7],
    ['(a (b (c (d (e)))))', 'parentheses nested deeper than 4 levels at offset 12', 12],
    ['r* x', 'a prefix needs at least 2 letters or digits before "*" at offset 0', 0],
    ['a*', 'a prefix needs at least 2 letters or digits before "*" at offset 0', 0],
    ['refund colour:red', 'unknown filter "colour" at offset 7', 7],
    [
      'status:done',
      'invalid value "done" for "status" (one of open, pending, snoozed, closed) at offset 7',
      7,
    ],
    ['"unclosed phrase', 'unclosed quote at offset 0', 0],
    [
      'created>yesterday',
      'invalid date "yesterday" for "created>" (2026-11-01 or an ISO 8601 instant) at offset 8',
      8,
    ],
  ])('%s is 422 with the field q and the offset', async (q, message, offset) => {
    const response = await search(q);
    expect(response.status).toBe(422);
    const error = errorOf(response);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.details).toMatchObject({ field: 'q', offset });
    expect(error.message).toContain(message);
  });
});
