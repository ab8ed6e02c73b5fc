import type { DemoCredentials } from '../infra/local/seed';
import { fixtureApiKey, stringAt } from './fixtures';
import type { Call, Scenario } from './round-trips';

/** What the conversation scenarios need from the round-trip bench. */
export interface FixtureContext {
  demo: DemoCredentials;
  platform: string;
  orgPath: string;
  /** The bench's main conversation (the demo visitor's, opened by the demo API key). */
  conversationId: string;
  /** Sends a request that is not measured and fails unless it answers `status`. */
  request: (call: Call, status: number, what: string) => Promise<unknown>;
  /** The service's clock (the bench moves it forward a minute per scenario). */
  nowMs: () => number;
}

/** Each call returns the next value, round and round: two calls in a row never return the same. */
function cycle<T>(first: T, ...rest: T[]): () => T {
  const values = [first, ...rest];
  let index = 0;
  return () => values[index++ % values.length] ?? first;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * Scenarios for the conversation-scoped routes (state, messages, notes, bulk) and the events feed.
 *
 * Fixtures are written by a separate API key and a separate widget visitor, never by the measured
 * credentials, so preparing a request warms no auth cache entry or rate-limit lease of its caller.
 * Every repeated write is a real write: a new priority, locale, snooze or reminder, new content,
 * fresh messages, notes or conversations made by the scenario's `call` before the measured request.
 */
export async function conversationScenarios(context: FixtureContext): Promise<Scenario[]> {
  const { demo, platform, orgPath, conversationId, request, nowMs } = context;
  const apiKey = demo.apiKey;
  const operator = demo.adminSession;
  const visitor = demo.visitorToken;
  let sequence = 0;
  const nextNumber = () => ++sequence;

  // ── Fixture credentials ──────────────────────────────────────────────────────────────────────
  const fixtureKey = await fixtureApiKey(context, 'conversation');
  const fixtureVisitor = await request(
    {
      method: 'POST',
      path: '/api/widget/visitors',
      headers: { 'X-Widget-Key': demo.widgetKey },
      body: { identifier: 'bench-fixtures@example.com' },
    },
    201,
    'create the fixture visitor',
  );
  const fixtureVisitorToken = stringAt(fixtureVisitor, 'token');
  // More enabled locales, so that every locale change is a change.
  await request(
    { method: 'PATCH', path: orgPath, token: platform, body: { locales: ['en', 'fr', 'de'] } },
    200,
    'enable locales',
  );

  // ── Fixture helpers (fixture credentials only) ───────────────────────────────────────────────
  const at = (id: string, suffix = '') => `/api/conversations/${id}${suffix}`;
  const openConversation = async (message: string): Promise<string> =>
    stringAt(
      await request(
        {
          method: 'POST',
          path: '/api/conversations',
          token: fixtureKey,
          body: { visitorId: demo.visitorId, message },
        },
        201,
        'open a conversation',
      ),
      'id',
    );
  const openConversations = async (count: number): Promise<string[]> => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++)
      ids.push(await openConversation(`Order #${1000 + nextNumber()} has not arrived yet`));
    return ids;
  };
  const visitorConversation = async (): Promise<string> =>
    stringAt(
      await request(
        { method: 'POST', path: '/api/conversations', token: fixtureVisitorToken, body: {} },
        201,
        'open a visitor conversation',
      ),
      'id',
    );
  const postMessage = async (id: string, token: string, body: Record<string, unknown>): Promise<string> =>
    stringAt(
      await request({ method: 'POST', path: at(id, '/messages'), token, body }, 201, 'post a message'),
      'id',
    );
  const operatorMessage = (id: string, content: string) =>
    postMessage(id, fixtureKey, { content, operatorId: demo.adminOperatorId });
  const visitorMessages = async (id: string, count: number): Promise<string[]> => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++)
      ids.push(
        await postMessage(id, fixtureVisitorToken, { content: `Any news on my order? (${nextNumber()})` }),
      );
    return ids;
  };
  const markRead = (id: string) =>
    request({ method: 'POST', path: at(id, '/read'), token: fixtureKey }, 200, 'mark read');
  const createNote = async (id: string, content: string): Promise<string> =>
    stringAt(
      await request(
        { method: 'POST', path: at(id, '/notes'), token: fixtureKey, body: { content } },
        201,
        'create a note',
      ),
      'id',
    );
  const snoozeBody = () => ({
    until: iso(nowMs() + 3_600_000 + nextNumber() * 1000),
    reason: 'Waiting for the courier',
  });
  const followUpBody = () => ({
    remindAt: iso(nowMs() + 86_400_000 + nextNumber() * 1000),
    note: 'Call back about the refund',
  });

  // ── Fixture data ─────────────────────────────────────────────────────────────────────────────
  // State changes (PATCH, locale, snooze, follow-up) happen on a conversation of their own.
  const stateConversation = await openConversation('I was charged twice for my last order');
  // The main conversation: assigned once (assignment history), an operator reply, an edited
  // reply (revisions), two notes.
  await request(
    {
      method: 'PATCH',
      path: at(conversationId),
      token: fixtureKey,
      body: { operatorId: demo.adminOperatorId },
    },
    200,
    'assign the conversation',
  );
  const replyId = await operatorMessage(conversationId, 'Thanks, let me check your order.');
  const editedId = await operatorMessage(conversationId, 'Your refund of €24 was issued today.');
  for (const content of ['Your refund of €42 was issued today.', 'Your refund of €42 was issued today!']) {
    await request(
      {
        method: 'PATCH',
        path: at(conversationId, `/messages/${editedId}`),
        token: fixtureKey,
        body: { content },
      },
      200,
      'edit a message',
    );
  }
  await createNote(conversationId, 'VIP customer: refund without the usual checks.');
  await createNote(conversationId, 'Courier confirmed the parcel was lost.');
  // Read state: conversations of the fixture visitor, who writes the visitor messages.
  const readConversation = await visitorConversation();
  const unreadConversation = await visitorConversation();

  const priority = cycle('high', 'urgent', 'low', 'normal');
  const locale = cycle('fr', 'de');

  return [
    {
      route: 'POST /api/conversations/bulk-close',
      variant: '3 ids',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'bulk',
      call: async () => ({
        method: 'POST',
        path: '/api/conversations/bulk-close',
        token: apiKey,
        body: { conversationIds: await openConversations(3) },
      }),
    },
    {
      route: 'POST /api/conversations/bulk-delete',
      variant: '3 ids',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'bulk',
      call: async () => ({
        method: 'POST',
        path: '/api/conversations/bulk-delete',
        token: apiKey,
        body: { conversationIds: await openConversations(3) },
      }),
    },
    {
      route: 'PATCH /api/conversations/{id}',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'transaction',
      call: () => ({
        method: 'PATCH',
        path: at(stateConversation),
        token: apiKey,
        body: { priority: priority(), tags: ['billing', 'refund'] },
      }),
    },
    {
      route: 'PATCH /api/conversations/{id}',
      caller: 'operator',
      expectedStatus: 200,
      target: 'transaction',
      call: () => ({
        method: 'PATCH',
        path: at(stateConversation),
        token: operator,
        body: { priority: priority(), title: 'Double charge' },
      }),
    },
    {
      route: 'PATCH /api/conversations/{id}/locale',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'transaction',
      call: () => ({
        method: 'PATCH',
        path: at(stateConversation, '/locale'),
        token: apiKey,
        body: { locale: locale(), locked: true },
      }),
    },
    {
      route: 'POST /api/conversations/{id}/snooze',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'transaction',
      call: () => ({
        method: 'POST',
        path: at(stateConversation, '/snooze'),
        token: apiKey,
        body: snoozeBody(),
      }),
    },
    {
      route: 'DELETE /api/conversations/{id}/snooze',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'transaction',
      call: async () => {
        await request(
          { method: 'POST', path: at(stateConversation, '/snooze'), token: fixtureKey, body: snoozeBody() },
          200,
          'snooze',
        );
        return { method: 'DELETE', path: at(stateConversation, '/snooze'), token: apiKey };
      },
    },
    {
      route: 'PUT /api/conversations/{id}/follow-up',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'transaction',
      call: () => ({
        method: 'PUT',
        path: at(stateConversation, '/follow-up'),
        token: apiKey,
        body: followUpBody(),
      }),
    },
    {
      route: 'DELETE /api/conversations/{id}/follow-up',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'transaction',
      call: async () => {
        await request(
          {
            method: 'PUT',
            path: at(stateConversation, '/follow-up'),
            token: fixtureKey,
            body: followUpBody(),
          },
          200,
          'set a follow-up',
        );
        return { method: 'DELETE', path: at(stateConversation, '/follow-up'), token: apiKey };
      },
    },
    {
      route: 'GET /api/conversations/{id}/assignment-history',
      target: 'childRead',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: at(conversationId, '/assignment-history'), token: apiKey }),
    },
    {
      route: 'POST /api/conversations/{id}/read',
      variant: '2 unread',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'bulk',
      call: async () => {
        await visitorMessages(readConversation, 2);
        return { method: 'POST', path: at(readConversation, '/read'), token: apiKey };
      },
    },
    {
      route: 'GET /api/conversations/{id}/messages',
      target: 'childRead',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: at(conversationId, '/messages'), token: apiKey }),
    },
    {
      route: 'GET /api/conversations/{id}/messages',
      target: 'childRead',
      caller: 'visitor',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: at(conversationId, '/messages?limit=20'), token: visitor }),
    },
    {
      route: 'POST /api/conversations/{id}/messages',
      caller: 'apiKey',
      expectedStatus: 201,
      target: 'transaction',
      call: () => ({
        method: 'POST',
        path: at(conversationId, '/messages'),
        token: apiKey,
        body: {
          content: `We have shipped a replacement, tracking number ${nextNumber()}.`,
          operatorId: demo.adminOperatorId,
        },
      }),
    },
    {
      route: 'POST /api/conversations/{id}/messages',
      caller: 'operator',
      expectedStatus: 201,
      target: 'transaction',
      call: () => ({
        method: 'POST',
        path: at(conversationId, '/messages'),
        token: operator,
        body: { content: `Is there anything else I can help with? (${nextNumber()})`, replyToId: replyId },
      }),
    },
    {
      route: 'POST /api/conversations/{id}/messages',
      caller: 'visitor',
      expectedStatus: 201,
      target: 'transaction',
      call: () => ({
        method: 'POST',
        path: at(conversationId, '/messages'),
        token: visitor,
        body: { content: `Thank you! One more question about order #${2000 + nextNumber()}.` },
      }),
    },
    {
      route: 'PATCH /api/conversations/{id}/messages/unread-bulk',
      variant: '2 read',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'bulk',
      call: async () => {
        const messageIds = await visitorMessages(unreadConversation, 2);
        await markRead(unreadConversation);
        return {
          method: 'PATCH',
          path: at(unreadConversation, '/messages/unread-bulk'),
          token: apiKey,
          body: { messageIds },
        };
      },
    },
    {
      route: 'GET /api/conversations/{id}/messages/{messageId}',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: at(conversationId, `/messages/${replyId}`), token: apiKey }),
    },
    {
      route: 'PATCH /api/conversations/{id}/messages/{messageId}',
      variant: 'latest message',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'transaction',
      call: async () => {
        const number = nextNumber();
        const messageId = await operatorMessage(conversationId, `Your voucher code is BENCH-${number}.`);
        return {
          method: 'PATCH',
          path: at(conversationId, `/messages/${messageId}`),
          token: apiKey,
          body: { content: `Your voucher code is BENCH-${number}-X (the first one had a typo).` },
        };
      },
    },
    {
      route: 'GET /api/conversations/{id}/messages/{messageId}/revisions',
      target: 'childRead',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({
        method: 'GET',
        path: at(conversationId, `/messages/${editedId}/revisions`),
        token: apiKey,
      }),
    },
    {
      route: 'GET /api/conversations/{id}/notes',
      target: 'childRead',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: at(conversationId, '/notes'), token: apiKey }),
    },
    {
      route: 'POST /api/conversations/{id}/notes',
      caller: 'apiKey',
      expectedStatus: 201,
      target: 'transaction',
      call: () => ({
        method: 'POST',
        path: at(conversationId, '/notes'),
        token: apiKey,
        body: {
          content: `Refund approved by finance (ticket ${nextNumber()}).`,
          mentions: [demo.adminOperatorId],
        },
      }),
    },
    {
      route: 'POST /api/conversations/{id}/notes',
      caller: 'operator',
      expectedStatus: 201,
      target: 'transaction',
      call: () => ({
        method: 'POST',
        path: at(conversationId, '/notes'),
        token: operator,
        body: { content: `Customer called again, see ticket ${nextNumber()}.` },
      }),
    },
    {
      route: 'DELETE /api/conversations/{id}/notes/{noteId}',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'transaction',
      call: async () => {
        const noteId = await createNote(conversationId, `Draft note ${nextNumber()}, to be removed.`);
        return { method: 'DELETE', path: at(conversationId, `/notes/${noteId}`), token: apiKey };
      },
    },
    {
      route: 'GET /api/events',
      variant: 'first page',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: '/api/events?limit=50', token: apiKey }),
    },
  ];
}
