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

/** A conversation created in one call (its first message included), with the fields given. */
async function created(
  body: Record<string, unknown>,
): Promise<{ id: string; operatorId: string | null; createdAt: string }> {
  const answer = await call<{ id: string; operatorId: string | null; createdAt: string }>(
    'POST',
    '/api/conversations',
    { token: tenant.apiKey, body: { visitorId: visitor.visitor.id, ...body } },
  );
  expect(answer.status, answer.text).toBe(201);
  return answer.body;
}

const patch = async (id: string, body: Record<string, unknown>) => {
  const answer = await call('PATCH', `/api/conversations/${id}`, { token: tenant.apiKey, body });
  expect(answer.status, answer.text).toBe(200);
};

describe('filters', () => {
  it('status, priority and tags (quoted values too) narrow the text matches', async () => {
    const word = marker();
    const urgent = await created({
      message: `${word} one`,
      priority: 'urgent',
      tags: ['vip customer', 'billing'],
    });
    const low = await created({ message: `${word} two`, priority: 'low', tags: ['billing'] });
    const closed = await created({ message: `${word} three` });
    await patch(closed.id, { status: 'closed' });
    await searchUntil(`${word} status:closed`, (page) => page.total === 1);
    expect(ids((await search(`${word} status:open`)).body)).toEqual([urgent.id, low.id].sort());
    expect(ids((await search(`${word} -status:closed`)).body)).toEqual([urgent.id, low.id].sort());
    expect(ids((await search(`${word} priority:urgent`)).body)).toEqual([urgent.id]);
    expect(ids((await search(`${word} priority:low OR priority:urgent`)).body)).toEqual(
      [urgent.id, low.id].sort(),
    );
    expect(ids((await search(`${word} tag:billing`)).body)).toEqual([urgent.id, low.id].sort());
    expect(ids((await search(`${word} tag:"vip customer"`)).body)).toEqual([urgent.id]);
    // A tag matches whole: a word of it is not the tag.
    expect((await search(`${word} tag:vip`)).body.total).toBe(0);
  });

  it('a query of filters only sorts newest first, without scores', async () => {
    const tag = marker();
    const first = await created({ message: 'first of two', tags: [tag] });
    const second = await created({ message: 'second of two', tags: [tag] });
    const page = await searchUntil(`tag:${tag}`, (found) => found.total === 2);
    expect(page.data.map((hit) => hit.conversation.id)).toEqual([second.id, first.id]);
    expect(page.data.map((hit) => hit.score)).toEqual([null, null]);
    expect(page.data.map((hit) => hit.matches)).toEqual([[], []]);
    const oldest = (await search(`tag:${tag}`, { sort: 'oldest' })).body;
    expect(oldest.data.map((hit) => hit.conversation.id)).toEqual([first.id, second.id]);
  });

  it('operator:none finds the unassigned; operator:<id> the assigned', async () => {
    const word = marker();
    const assigned = await created({ message: `${word} assigned` });
    await patch(assigned.id, { operatorId: tenant.operatorId });
    const unassigned = await created({ message: `${word} waiting` });
    expect(unassigned.operatorId).toBeNull();
    // Both indexed (the assignment included) before either filter is judged.
    await searchUntil(`${word} operator:${tenant.operatorId}`, (page) => page.total === 1);
    await searchUntil(`${word} operator:none`, (page) => page.total === 1);
    expect(ids((await search(`${word} operator:${tenant.operatorId}`)).body)).toEqual([assigned.id]);
    expect(ids((await search(`${word} operator:none`)).body)).toEqual([unassigned.id]);
  });

  it('cf.<name>: matches a custom field value, a list value by one of its items', async () => {
    const suffix = marker();
    const define = async (name: string, body: Record<string, unknown>) => {
      const field = await call('POST', '/api/custom-fields', {
        token: tenant.apiKey,
        body: { name, translations: [{ locale: 'en', status: 'published', label: name }], ...body },
      });
      expect(field.status, field.text).toBe(201);
    };
    const order = `order${suffix}`;
    const topics = `topics${suffix}`;
    await define(order, { type: 'text' });
    await define(topics, {
      type: 'multiselect',
      options: ['billing', 'shipping'].map((value) => ({
        value,
        translations: [{ locale: 'en', status: 'published', label: value }],
      })),
    });
    const word = marker();
    const a = await created({
      message: `${word} a`,
      customFields: { [order]: 'A-1042', [topics]: ['shipping'] },
    });
    const b = await created({
      message: `${word} b`,
      customFields: { [order]: 'B 7', [topics]: ['billing'] },
    });
    await searchUntil(word, (page) => page.total === 2);
    expect(ids((await search(`${word} cf.${order}:A-1042`)).body)).toEqual([a.id]);
    expect(ids((await search(`${word} cf.${order}:"B 7"`)).body)).toEqual([b.id]);
    expect(ids((await search(`cf.${topics}:billing`)).body)).toEqual([b.id]);
    expect(ids((await search(`${word} cf.${order}:A-104`)).body)).toEqual([]);
  });

  it('created> / created< and updated> / updated< take a date or an instant', async () => {
    const word = marker();
    const before = await created({ message: `${word} earlier` });
    // Instants a moment after the first conversation and before the second.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const between = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const after = await created({ message: `${word} later` });
    await searchUntil(word, (page) => page.total === 2);
    expect(ids((await search(`${word} created>${between}`)).body)).toEqual([after.id]);
    expect(ids((await search(`${word} created<${between}`)).body)).toEqual([before.id]);
    expect(ids((await search(`${word} updated<${between}`)).body)).toEqual([before.id]);
    expect(ids((await search(`${word} created>2000-01-01 created<2999-01-01`)).body)).toEqual(
      [before.id, after.id].sort(),
    );
    expect((await search(`${word} updated>2999-01-01`)).body.total).toBe(0);
    // A later change moves updatedAt past the instant.
    await patch(before.id, { priority: 'high' });
    await searchUntil(`${word} updated>${between}`, (page) => page.total === 2);
  });

  it('a PATCH of a filtered field is searchable within seconds', async () => {
    const word = marker();
    const { id } = await created({ message: `${word} soon closed` });
    await searchUntil(word, (page) => page.total === 1);
    expect((await search(`${word} status:closed`)).body.total).toBe(0);
    await patch(id, { status: 'closed', tags: ['handled'] });
    const page = await searchUntil(`${word} status:closed tag:handled`, (found) => found.total === 1);
    expect(ids(page)).toEqual([id]);
    expect((await search(`${word} status:open`)).body.total).toBe(0);
  });
});

describe('titles, notes, order', () => {
  it('in:title matches titles only, as a match of kind "title" without an id', async () => {
    const word = marker();
    const titled = await conversation('nothing to see in the message', { title: `Order ${word} lost` });
    const said = await conversation(`the message says ${word}`);
    await searchUntil(word, (page) => page.total === 2);
    const page = (await search(`in:title ${word}`)).body;
    expect(ids(page)).toEqual([titled]);
    expect(page.data[0]?.matches).toEqual([
      { kind: 'title', id: null, snippet: `Order <mark>${word}</mark> lost`, createdAt: expect.any(String) },
    ]);
    expect(ids((await search(`in:messages ${word}`)).body)).toEqual([said]);
  });

  it('a deleted note’s text is gone from the index', async () => {
    const word = marker();
    const id = await conversation('a conversation with a note');
    const note = await call<{ id: string }>('POST', `/api/conversations/${id}/notes`, {
      token: tenant.apiKey,
      body: { content: `internal ${word}` },
    });
    expect(note.status).toBe(201);
    const found = await searchUntil(word, (page) => page.total === 1);
    expect(found.data[0]?.matches[0]).toMatchObject({ kind: 'note', id: note.body.id });
    const deleted = await call('DELETE', `/api/conversations/${id}/notes/${note.body.id}`, {
      token: tenant.apiKey,
    });
    expect(deleted.status).toBeLessThan(300);
    expect((await searchUntil(word, (page) => page.total === 0)).data).toEqual([]);
    expect((await search(`in:notes ${word}`)).body.total).toBe(0);
  });

  it('sort=oldest and newest order by last message; scores only under relevance', async () => {
    const word = marker();
    const order: string[] = [];
    for (const text of ['first', 'second', 'third']) order.push(await conversation(`${word} ${text}`));
    await searchUntil(word, (page) => page.total === 3);
    const newest = (await search(word, { sort: 'newest' })).body;
    expect(newest.data.map((hit) => hit.conversation.id)).toEqual([...order].reverse());
    expect(newest.data.every((hit) => hit.score === null)).toBe(true);
    const oldest = (await search(word, { sort: 'oldest' })).body;
    expect(oldest.data.map((hit) => hit.conversation.id)).toEqual(order);
    expect(oldest.data.every((hit) => hit.score === null && hit.matches.length === 1)).toBe(true);
    // A new message moves a conversation to the front of newest.
    await post(order[0] ?? '', `${word} again`);
    await searchUntil(word, (page) => page.data[0]?.conversation.id === order[0], { sort: 'newest' });
    const relevance = (await search(word)).body;
    expect(relevance.data.every((hit) => typeof hit.score === 'number' && hit.score > 0)).toBe(true);
    // Equal scores: newest last message first.
    const scores = relevance.data.map((hit) => hit.score ?? 0);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });
});

describe('total', () => {
  it('is exact up to the cap, then the cap with totalCapped (the cap lowered at the SQL layer)', async () => {
    const word = marker();
    for (let i = 0; i < 3; i++) await conversation(`${word} ${i}`);
    const page = await searchUntil(word, (found) => found.total === 3);
    expect(page.totalCapped).toBeUndefined();
    // The same statement the function runs, against the same index, with TOTAL_CAP lowered.
    const { search: searchIndex } = await import('../../shared/search/search');
    const request = { orgId: tenant.orgId, q: word, limit: 1 };
    expect(await searchIndex({ ...request, totalCap: 2 })).toMatchObject({ total: 2, totalCapped: true });
    expect(await searchIndex({ ...request, totalCap: 3 })).toMatchObject({ total: 3, totalCapped: false });
    const capped = await searchIndex({ ...request, totalCap: 2 });
    // Paging is not capped: every match is reachable.
    expect(capped.hits).toHaveLength(1);
    expect(capped.nextCursor).not.toBeNull();
  });
});

describe('one row per conversation', () => {
  it('a phrase matches adjacent words of one text, never across two messages', async () => {
    const word = marker();
    const within = await conversation(`${word} where is my tracking number please`);
    const across = await conversation(`${word} I lost the tracking`);
    await post(across, 'number nine is what I wrote');
    await searchUntil(word, (page) => page.total === 2);
    // The second message of `across` is indexed too (it alone says "nine"), or the last query races it.
    await searchUntil(`${word} nine`, (page) => page.total === 1);
    expect(ids((await search(`${word} "tracking number"`)).body)).toEqual([within]);
    expect(ids((await search(`${word} "my tracking number"`)).body)).toEqual([within]);
    expect(ids((await search(`${word} "tracking number please"`)).body)).toEqual([within]);
    expect(ids((await search(`${word} "number please"`)).body)).toEqual([within]);
    expect(ids((await search(`${word} tracking number`)).body)).toEqual([within, across].sort());
  });

  it('from: and in: match words only in those texts of a conversation', async () => {
    const word = marker();
    const asked = await conversation(`${word} my parcel arrived broken`);
    await post(asked, `${word} we will send a replacement`);
    await searchUntil(`${word} replacement`, (page) => page.total === 1);
    expect(ids((await search(`${word} parcel from:visitor`)).body)).toEqual([asked]);
    expect((await search(`${word} parcel from:operator`)).body.total).toBe(0);
    expect(ids((await search(`${word} replacement from:operator`)).body)).toEqual([asked]);
    expect((await search(`${word} replacement from:visitor`)).body.total).toBe(0);
    expect((await search(`${word} replacement in:title`)).body.total).toBe(0);
  });

  it('relevance ranks the newest matches; older ones follow newest first with score 0, all paged', async () => {
    const word = marker();
    const made: string[] = [];
    for (let i = 0; i < 4; i++) made.push(await conversation(`${word} item ${i}`));
    await searchUntil(word, (page) => page.total === 4);
    const { search: searchIndex } = await import('../../shared/search/search');
    // The same statement the function runs, with RANK_WINDOW lowered to 2: the two newest ranked.
    const request = { orgId: tenant.orgId, q: word, limit: 1, rankWindow: 2 };
    const seen: { id: string; score: number | null }[] = [];
    let cursor: string | undefined;
    do {
      const page = await searchIndex({ ...request, cursor });
      expect(page.total).toBe(4);
      seen.push(...page.hits.map((hit) => ({ id: hit.conversationId, score: hit.score })));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen.map((hit) => hit.id).sort()).toEqual([...made].sort());
    // Newest two first (by score), then the older two, newest first, score 0.
    expect(new Set(seen.slice(0, 2).map((hit) => hit.id))).toEqual(new Set([made[2], made[3]]));
    expect(seen.slice(0, 2).every((hit) => (hit.score ?? 0) > 0)).toBe(true);
    expect(seen.slice(2)).toEqual([
      { id: made[1], score: 0 },
      { id: made[0], score: 0 },
    ]);
    // Equal scores: the newest first.
    expect(seen[0]?.id).toBe(made[3]);
  });
});
