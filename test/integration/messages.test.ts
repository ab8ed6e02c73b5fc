import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { useInProcessStack } from '../helpers/in-process-stack';

/** Message rules, on a stack whose clock this file controls (the 5-minute edit window). */
const time = useInProcessStack();

type Message = {
  id: string;
  content: string;
  senderType: string;
  senderId: string;
  isRead: boolean;
  isEdited: boolean;
  deletedAt: string | null;
};
type Conversation = {
  id: string;
  messageCount: number;
  unreadCount: number;
  hasUnreadMessages: boolean;
  lastMessage: { id: string; content: string } | null;
  firstResponseTimeMs: number | null;
};
const errorOf = (response: ApiResponse<unknown>) =>
  (response.body as { error: { code: string; details?: Record<string, unknown> } }).error;

let tenant: Tenant;
let visitor: { token: string; visitor: { id: string } };
let conversationId: string;

beforeAll(async () => {
  tenant = await createTenant();
  visitor = await createVisitor(tenant.widgetKey);
  const created = await call<Conversation>('POST', '/api/conversations', { token: visitor.token, body: {} });
  conversationId = created.body.id;
});

const path = (suffix = '') => `/api/conversations/${conversationId}${suffix}`;
const send = (token: string, body: Record<string, unknown>) =>
  call<Message>('POST', path('/messages'), { token, body });
const conversation = async () => (await call<Conversation>('GET', path(), { token: tenant.apiKey })).body;

describe('sending messages', () => {
  it('takes the sender from the credential and keeps the computed fields exact', async () => {
    const fromVisitor = await send(visitor.token, { content: 'Hello, my order is late' });
    expect(fromVisitor.status).toBe(201);
    expect(fromVisitor.body).toMatchObject({
      senderType: 'visitor',
      senderId: visitor.visitor.id,
      isRead: false,
    });
    time.advance(90_000);
    const fromOperator = await send(tenant.operatorSession, {
      content: 'Looking into it',
      replyToId: fromVisitor.body.id,
    });
    expect(fromOperator.body).toMatchObject({ senderType: 'operator', senderId: tenant.operatorId });
    const fromKey = await send(tenant.apiKey, {
      content: 'Shipped today',
      operatorId: tenant.adminOperatorId,
    });
    expect(fromKey.body).toMatchObject({ senderType: 'operator', senderId: tenant.adminOperatorId });

    const state = await conversation();
    expect(state.messageCount).toBe(3);
    expect(state.unreadCount).toBe(1);
    expect(state.hasUnreadMessages).toBe(true);
    expect(state.lastMessage).toMatchObject({ id: fromKey.body.id, content: 'Shipped today' });
    // 90 s of moved clock plus the few real milliseconds between the two requests.
    expect(state.firstResponseTimeMs).toBeGreaterThanOrEqual(90_000);
    expect(state.firstResponseTimeMs).toBeLessThan(95_000);
  });

  it('refuses references that are not of this conversation or organization (422)', async () => {
    const other = await call<Conversation>('POST', '/api/conversations', { token: visitor.token, body: {} });
    const foreign = await call<Message>('POST', `/api/conversations/${other.body.id}/messages`, {
      token: visitor.token,
      body: { content: 'elsewhere' },
    });
    const replyElsewhere = await send(visitor.token, { content: 'x', replyToId: foreign.body.id });
    expect(replyElsewhere.status).toBe(422);
    expect(errorOf(replyElsewhere).details?.field).toBe('replyToId');
    const keyWithoutOperator = await send(tenant.apiKey, { content: 'x' });
    expect(errorOf(keyWithoutOperator).details?.field).toBe('operatorId');
    const unknownOperator = await send(tenant.apiKey, { content: 'x', operatorId: crypto.randomUUID() });
    expect(errorOf(unknownOperator).details?.field).toBe('operatorId');
    const unknownMention = await send(tenant.operatorSession, {
      content: 'x',
      mentions: [tenant.adminOperatorId, crypto.randomUUID()],
    });
    expect(errorOf(unknownMention).details?.field).toBe('mentions.1');
    const repeated = await send(tenant.apiKey, {
      content: 'x',
      operatorId: tenant.operatorId,
      mentions: [tenant.operatorId, tenant.operatorId, crypto.randomUUID()],
    });
    expect(errorOf(repeated).details?.field).toBe('mentions.2');
    const sessionNamingOperator = await send(tenant.operatorSession, {
      content: 'x',
      operatorId: tenant.operatorId,
    });
    expect(sessionNamingOperator.status).toBe(422);
    expect((await conversation()).messageCount).toBe(3);
  });

  it('sanitizes content to text', async () => {
    const sent = await send(visitor.token, {
      content: 'Look <script>alert(1)</script><a href="javascript:x" onclick="y">here</a>',
    });
    expect(sent.body.content).toBe('Look here');
    const emptied = await send(visitor.token, { content: '<iframe src="x"></iframe>' });
    expect(errorOf(emptied).details?.field).toBe('content');
  });

  it('keeps other visitors out (404)', async () => {
    const stranger = await createVisitor(tenant.widgetKey);
    expect((await send(stranger.token, { content: 'hi' })).status).toBe(404);
    expect((await call('GET', path('/messages'), { token: stranger.token })).status).toBe(404);
  });
});

describe('listing messages', () => {
  it('pages newest first with a cursor, default 50, max 100', async () => {
    const page = await call<{ data: Message[]; nextCursor: string | null }>(
      'GET',
      path('/messages?limit=2'),
      { token: visitor.token },
    );
    expect(page.status).toBe(200);
    expect(page.body.data).toHaveLength(2);
    const next = await call<{ data: Message[]; nextCursor: string | null }>(
      'GET',
      path(`/messages?limit=2&cursor=${encodeURIComponent(page.body.nextCursor ?? '')}`),
      { token: visitor.token },
    );
    const ids = [...page.body.data, ...next.body.data].map((message) => message.id);
    expect(ids).toEqual([...ids].sort().reverse());
    expect((await call('GET', path('/messages?limit=101'), { token: visitor.token })).status).toBe(422);
  });

  it('reaches every message of a conversation whose messages pass 1 MB, full pages and all', async () => {
    const own = await call<Conversation>('POST', '/api/conversations', { token: visitor.token, body: {} });
    const messages = (suffix: string) => `/api/conversations/${own.body.id}/messages${suffix}`;
    // 7,500 three-byte characters, and a search text as long: ~45 KB stored each, 25 of them ~1.1 MB,
    // more than one Query response holds.
    const posted: string[] = [];
    for (let i = 0; i < 25; i++) {
      const sent = await call<Message>('POST', messages(''), {
        token: visitor.token,
        body: { content: `${i} ${'語'.repeat(7_500)}` },
      });
      expect(sent.status).toBe(201);
      posted.push(sent.body.id);
    }
    const newestFirst = [...posted].reverse();
    const pages = async (limit: number) => {
      const seen: { ids: string[]; nextCursor: string | null }[] = [];
      let cursor: string | null = null;
      do {
        const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
        const page = await call<{ data: Message[]; nextCursor: string | null }>(
          'GET',
          messages(`?limit=${limit}${query}`),
          { token: visitor.token },
        );
        expect(page.status).toBe(200);
        cursor = page.body.nextCursor;
        seen.push({ ids: page.body.data.map((message) => message.id), nextCursor: cursor });
      } while (cursor && seen.length < 10);
      return seen;
    };
    // One page holds them all (not the ~22 one response holds), and says nothing follows.
    const all = await pages(100);
    expect(all.map((page) => page.ids)).toEqual([newestFirst]);
    expect(all[0]?.nextCursor).toBeNull();
    // Full pages across responses; the last page ends the listing.
    const byTwenty = await pages(20);
    expect(byTwenty.map((page) => page.ids)).toEqual([newestFirst.slice(0, 20), newestFirst.slice(20)]);
  });
});

describe('editing messages', () => {
  it('records revisions, newest first, and refuses edits after 5 minutes (409)', async () => {
    const sent = await send(visitor.token, { content: 'first' });
    const messagePath = path(`/messages/${sent.body.id}`);
    const edit = (content: string, token = visitor.token) =>
      call<Message>('PATCH', messagePath, { token, body: { content } });
    expect((await edit('second')).body).toMatchObject({ content: 'second', isEdited: true });
    expect((await edit('third <b>bold</b>')).body.content).toBe('third bold');
    const history = await call<{ messageId: string; edits: { content: string; editedBy: string }[] }>(
      'GET',
      `${messagePath}/revisions`,
      {
        token: tenant.apiKey,
      },
    );
    expect(history.body.messageId).toBe(sent.body.id);
    expect(history.body.edits.map((entry) => entry.content)).toEqual(['second', 'first']);
    expect(history.body.edits[0]?.editedBy).toBe(visitor.visitor.id);
    expect((await conversation()).lastMessage?.content).toBe('third bold');

    time.advance(5 * 60_000 + 1);
    const late = await edit('too late');
    expect(late.status).toBe(409);
    expect(errorOf(late).details?.reason).toBe('edit_window_expired');
  });

  it('keeps the 20 most recent prior versions', async () => {
    const sent = await send(tenant.operatorSession, { content: 'v0' });
    for (let i = 1; i <= 22; i++) {
      const edited = await call('PATCH', path(`/messages/${sent.body.id}`), {
        token: tenant.operatorSession,
        body: { content: `v${i}` },
      });
      expect(edited.status).toBe(200);
    }
    const history = await call<{ edits: { content: string }[] }>(
      'GET',
      path(`/messages/${sent.body.id}/revisions`),
      { token: tenant.apiKey },
    );
    expect(history.body.edits.map((entry) => entry.content)).toEqual(
      Array.from({ length: 20 }, (_, i) => `v${21 - i}`),
    );
  });

  it('lets visitors edit only their own messages, operators their own, keys and admins any operator message', async () => {
    const byVisitor = await send(visitor.token, { content: 'mine' });
    const byOperator = await send(tenant.operatorSession, { content: 'operator says' });
    const stranger = await createVisitor(tenant.widgetKey);
    const patch = (id: string, token: string) =>
      call('PATCH', path(`/messages/${id}`), { token, body: { content: 'changed' } });
    expect((await patch(byOperator.body.id, visitor.token)).status).toBe(403);
    expect((await patch(byVisitor.body.id, stranger.token)).status).toBe(404);
    expect((await patch(byVisitor.body.id, tenant.apiKey)).status).toBe(403);
    expect((await patch(byVisitor.body.id, tenant.adminSession)).status).toBe(403);
    expect((await patch(byOperator.body.id, tenant.apiKey)).status).toBe(200);
    expect((await patch(byOperator.body.id, tenant.adminSession)).status).toBe(200);
    const otherOperator = await send(tenant.adminSession, { content: 'admin says' });
    expect((await patch(otherOperator.body.id, tenant.operatorSession)).status).toBe(403);
    expect((await patch(crypto.randomUUID(), tenant.apiKey)).status).toBe(404);
  });
});

describe('read state', () => {
  it('marks visitor messages read and unread, counting only real changes', async () => {
    const own = await call<Conversation>('POST', '/api/conversations', { token: visitor.token, body: {} });
    const here = (suffix: string) => `/api/conversations/${own.body.id}${suffix}`;
    const sent: Message[] = [];
    for (const content of ['a', 'b', 'c']) {
      sent.push(
        (await call<Message>('POST', here('/messages'), { token: visitor.token, body: { content } })).body,
      );
    }
    const reply = await call<Message>('POST', here('/messages'), {
      token: tenant.operatorSession,
      body: { content: 'ok' },
    });
    const read = await call<{ updatedCount: number }>('POST', here('/read'), {
      token: tenant.operatorSession,
    });
    expect(read.body).toEqual({ updatedCount: 3 });
    expect(
      (await call<{ updatedCount: number }>('POST', here('/read'), { token: tenant.apiKey })).body,
    ).toEqual({ updatedCount: 0 });
    const afterRead = await call<Conversation>('GET', here(''), { token: tenant.apiKey });
    expect(afterRead.body).toMatchObject({ unreadCount: 0, hasUnreadMessages: false });

    const ids = sent.slice(0, 2).map((message) => message.id);
    const unread = await call<{ updatedCount: number }>('PATCH', here('/messages/unread-bulk'), {
      token: tenant.apiKey,
      body: { messageIds: ids },
    });
    expect(unread.body).toEqual({ updatedCount: 2 });
    const again = await call<{ updatedCount: number }>('PATCH', here('/messages/unread-bulk'), {
      token: tenant.apiKey,
      body: { messageIds: ids },
    });
    expect(again.body).toEqual({ updatedCount: 0 });
    expect((await call<Conversation>('GET', here(''), { token: tenant.apiKey })).body.unreadCount).toBe(2);

    const withOperatorMessage = await call('PATCH', here('/messages/unread-bulk'), {
      token: tenant.apiKey,
      body: { messageIds: [ids[0], reply.body.id] },
    });
    expect(withOperatorMessage.status).toBe(422);
    expect(errorOf(withOperatorMessage).details?.field).toBe('messageIds.1');
    expect(
      (
        await call('PATCH', here('/messages/unread-bulk'), {
          token: visitor.token,
          body: { messageIds: ids },
        })
      ).status,
    ).toBe(403);
    const unknown = crypto.randomUUID();
    const missing = await call('PATCH', here('/messages/unread-bulk'), {
      token: tenant.apiKey,
      body: { messageIds: [ids[0], unknown, 'not-a-uuid'] },
    });
    expect(missing.status).toBe(404);
    expect(errorOf(missing).details?.ids).toEqual([unknown, 'not-a-uuid']);
    const tooMany = Array.from({ length: 501 }, () => crypto.randomUUID());
    expect(
      (
        await call('PATCH', here('/messages/unread-bulk'), {
          token: tenant.apiKey,
          body: { messageIds: tooMany },
        })
      ).status,
    ).toBe(422);
  });

  it('marks read every visitor message posted a moment before, as many as the conversation counts', async () => {
    const { here, posted } = await conversationWith(3);
    // Right after the posts, as an operator would on seeing them arrive.
    const read = await call<{ updatedCount: number }>('POST', here('/read'), {
      token: tenant.operatorSession,
    });
    expect(read.status, read.text).toBe(200);
    expect(read.body).toEqual({ updatedCount: 3 });
    expect((await call<Conversation>('GET', here(''), { token: tenant.apiKey })).body).toMatchObject({
      unreadCount: 0,
      hasUnreadMessages: false,
    });
    expect(await readStateOf(here, posted)).toEqual(posted.map(() => true));
  });

  it('marks read every unread message, chunk after chunk, one marked unread long ago included', async () => {
    // More than one chunk (99 messages and the conversation per transaction).
    const { here, posted } = await conversationWith(105);
    const read = await call<{ updatedCount: number }>('POST', here('/read'), { token: tenant.apiKey });
    expect(read.status, read.text).toBe(200);
    expect(read.body).toEqual({ updatedCount: 105 });
    expect((await call<Conversation>('GET', here(''), { token: tenant.apiKey })).body).toMatchObject({
      unreadCount: 0,
      hasUnreadMessages: false,
    });
    expect(new Set(await readStateOf(here, posted))).toEqual(new Set([true]));
    // Nothing left, and nothing counted twice.
    expect((await call('POST', here('/read'), { token: tenant.apiKey })).body).toEqual({ updatedCount: 0 });

    // The oldest message unread again, behind 104 read ones: found and marked.
    const oldest = posted[0] ?? '';
    const unread = await call('PATCH', here('/messages/unread-bulk'), {
      token: tenant.apiKey,
      body: { messageIds: [oldest] },
    });
    expect(unread.status, unread.text).toBe(200);
    expect((await call('POST', here('/read'), { token: tenant.apiKey })).body).toEqual({ updatedCount: 1 });
    expect(new Set(await readStateOf(here, posted))).toEqual(new Set([true]));
  }, 60_000);
});

/** A conversation of the visitor's own with `count` visitor messages, posted 5 at a time. */
async function conversationWith(count: number) {
  const own = await call<Conversation>('POST', '/api/conversations', { token: visitor.token, body: {} });
  expect(own.status, own.text).toBe(201);
  const here = (suffix: string) => `/api/conversations/${own.body.id}${suffix}`;
  const posted: string[] = [];
  for (let start = 0; start < count; start += 5) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(5, count - start) }, (_, i) =>
        call<Message>('POST', here('/messages'), {
          token: visitor.token,
          body: { content: `m${start + i}` },
        }),
      ),
    );
    for (const sent of batch) {
      expect(sent.status, sent.text).toBe(201);
      posted.push(sent.body.id);
    }
  }
  return { here, conversation: own.body.id, posted };
}

/** Whether each of `ids` reads as read, from the conversation's messages (pages of 100). */
async function readStateOf(here: (suffix: string) => string, ids: readonly string[]): Promise<boolean[]> {
  const byId = new Map<string, boolean>();
  let cursor: string | null = null;
  do {
    const query: string = `limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await call<{ data: Message[]; nextCursor: string | null }>(
      'GET',
      here(`/messages?${query}`),
      {
        token: tenant.apiKey,
      },
    );
    expect(page.status, page.text).toBe(200);
    for (const message of page.body.data) byId.set(message.id, message.isRead);
    cursor = page.body.nextCursor;
  } while (cursor);
  return ids.map((id) => byId.get(id) ?? false);
}
