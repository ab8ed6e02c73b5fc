import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { keys } from '../../shared/db/keys';
import { call, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { eventually } from '../helpers/eventually';

/**
 * A busy conversation: message posts commute (counts go up, the last message moves forward), so
 * many posts at once into one conversation all succeed and every one is counted, while versioned
 * writes keep their `If-Match` semantics.
 */

type Message = { id: string; senderType: string; createdAt: string };
type Conversation = {
  id: string;
  createdAt: string;
  version: number;
  priority: string;
  messageCount: number;
  unreadCount: number;
  hasUnreadMessages: boolean;
  lastMessage: { id: string; createdAt: string } | null;
  lastMessageAt: string;
  firstResponseTimeMs: number | null;
};
type EventPage = {
  data: { type: string; data: { id: string; conversationId: string } }[];
  nextCursor: string | null;
};

let tenant: Tenant;
let visitor: { token: string; visitor: { id: string } };

beforeAll(async () => {
  tenant = await createTenant();
  visitor = await createVisitor(tenant.widgetKey);
});

async function newConversation(): Promise<string> {
  const created = await call<Conversation>('POST', '/api/conversations', { token: visitor.token, body: {} });
  expect(created.status).toBe(201);
  return created.body.id;
}

const read = async (id: string) =>
  (await call<Conversation>('GET', `/api/conversations/${id}`, { token: tenant.apiKey })).body;

/** The `message.created` events of the organization's feed, up to its end (a short page). */
async function messageEvents(): Promise<EventPage['data']> {
  const events: EventPage['data'] = [];
  let cursor: string | null = null;
  let page: EventPage;
  do {
    const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    page = (
      await call<EventPage>('GET', `/api/events?types=message.created&limit=100${query}`, {
        token: tenant.apiKey,
      })
    ).body;
    events.push(...page.data);
    cursor = page.nextCursor;
    // The feed always hands out a cursor to poll from later: a page that is not full is its end.
  } while (cursor && page.data.length === 100);
  return events;
}

/** The n-th writer: visitors, operator sessions and API keys (naming an operator) in turn. */
function post(id: string, n: number) {
  const path = `/api/conversations/${id}/messages`;
  const content = `Message ${n}`;
  if (n % 3 === 0) return call<Message>('POST', path, { token: visitor.token, body: { content } });
  if (n % 3 === 1) return call<Message>('POST', path, { token: tenant.operatorSession, body: { content } });
  return call<Message>('POST', path, {
    token: tenant.apiKey,
    body: { content, operatorId: tenant.adminOperatorId },
  });
}

describe('many concurrent posts into one conversation', () => {
  it('all succeed, each is counted once, and the last message is the newest', async () => {
    const id = await newConversation();
    const before = await read(id);

    const answers = await Promise.all(Array.from({ length: 50 }, (_, n) => post(id, n)));

    expect(answers.map((answer) => answer.status).filter((status) => status !== 201)).toEqual([]);
    const posted = answers.map((answer) => answer.body);
    const after = await read(id);
    expect(after.messageCount).toBe(50);
    const fromVisitor = posted.filter((message) => message.senderType === 'visitor').length;
    expect(after.unreadCount).toBe(fromVisitor);
    expect(after.hasUnreadMessages).toBe(true);
    const newest = posted.reduce((latest, message) =>
      message.createdAt > latest.createdAt ||
      (message.createdAt === latest.createdAt && message.id > latest.id)
        ? message
        : latest,
    );
    expect(after.lastMessage?.createdAt).toBe(newest.createdAt);
    expect(after.lastMessageAt).toBe(newest.createdAt);
    // A post is not a change an If-Match writer must have seen.
    expect(after.version).toBe(before.version);
    // Set once, by an operator message answering a visitor message: never negative.
    expect(after.firstResponseTimeMs).not.toBeNull();
    expect(after.firstResponseTimeMs).toBeGreaterThanOrEqual(0);

    const listed = await call<{ data: Message[] }>('GET', `/api/conversations/${id}/messages?limit=100`, {
      token: tenant.apiKey,
    });
    expect(listed.body.data.map((message) => message.id).sort()).toEqual(
      posted.map((message) => message.id).sort(),
    );
    // One event per message, none lost and none twice (the feed shows an event once it has settled).
    const ofThis = async () => (await messageEvents()).filter((event) => event.data.conversationId === id);
    const events = await eventually(ofThis, (found) => found.length >= posted.length, { intervalMs: 500 });
    expect(events.map((event) => event.data.id).sort()).toEqual(posted.map((message) => message.id).sort());
  });

  it('shows a poller that follows the events feed during the burst every event exactly once', async () => {
    const id = await newConversation();
    // The poller starts at the feed's current end and follows its cursor, as an integrator does.
    const start = await call<EventPage>('GET', '/api/events?types=message.created&limit=100', {
      token: tenant.apiKey,
    });
    let cursor = start.body.nextCursor;
    const seen: string[] = [];
    const poll = async () => {
      for (;;) {
        const query = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
        const page = await call<EventPage & { done: boolean }>(
          'GET',
          `/api/events?types=message.created&limit=100${query}`,
          { token: tenant.apiKey },
        );
        seen.push(
          ...page.body.data.filter((event) => event.data.conversationId === id).map((e) => e.data.id),
        );
        cursor = page.body.nextCursor;
        if (page.body.done) return;
      }
    };
    let posting = true;
    const polling = (async () => {
      while (posting) {
        await poll();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const answers = await Promise.all(Array.from({ length: 50 }, (_, n) => post(id, n)));
    posting = false;
    await polling;
    expect(answers.map((answer) => answer.status).filter((status) => status !== 201)).toEqual([]);
    const posted = answers.map((answer) => answer.body.id).sort();
    // Keep polling from the same cursor until every event has settled, and a while after.
    await eventually(
      async () => {
        await poll();
        return seen.length;
      },
      (count) => count >= posted.length,
      { intervalMs: 250 },
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await poll();
    expect([...seen].sort()).toEqual(posted);
  });

  it('keeps an If-Match taken before the posts valid, and PATCHes among the posts neither fail nor lose a post', async () => {
    const id = await newConversation();
    const { version } = await read(id);

    const posts = Array.from({ length: 20 }, (_, n) => post(id, n));
    // One PATCH after another while the posts land: posts must not make a PATCH retry or fail.
    const patching = (async () => {
      const answers = [];
      for (const priority of ['low', 'high', 'urgent'])
        answers.push(
          await call<Conversation>('PATCH', `/api/conversations/${id}`, {
            token: tenant.apiKey,
            body: { priority },
          }),
        );
      return answers;
    })();
    const [postAnswers, patchAnswers] = await Promise.all([Promise.all(posts), patching]);

    expect(postAnswers.map((answer) => answer.status).filter((status) => status !== 201)).toEqual([]);
    expect(patchAnswers.map((answer) => answer.status).filter((status) => status !== 200)).toEqual([]);
    const after = await read(id);
    expect(after.messageCount).toBe(20);
    expect(after.version).toBe(version + 3);
    expect(after.priority).toBe('urgent');

    const stale = await call('PATCH', `/api/conversations/${id}`, {
      token: tenant.apiKey,
      headers: { 'If-Match': `"${version}"` },
      body: { priority: 'low' },
    });
    expect(stale.status).toBe(412);
    const current = await call<Conversation>('PATCH', `/api/conversations/${id}`, {
      token: tenant.apiKey,
      headers: { 'If-Match': `"${after.version}"` },
      body: { priority: 'low' },
    });
    expect(current.status).toBe(200);
    expect(current.body.messageCount).toBe(20);
  });

  it('answers 404 to posts into a conversation deleted meanwhile, and counts none of them after it', async () => {
    const id = await newConversation();
    const answers = await Promise.all([
      ...Array.from({ length: 10 }, (_, n) => post(id, n)),
      call('POST', '/api/conversations/bulk-delete', {
        token: tenant.apiKey,
        body: { conversationIds: [id] },
      }),
    ]);
    const statuses = answers.slice(0, 10).map((answer) => answer.status);
    expect(statuses.filter((status) => status !== 201 && status !== 404)).toEqual([]);
    expect(answers.at(-1)?.status).toBe(200);
    expect((await call('GET', `/api/conversations/${id}`, { token: tenant.apiKey })).status).toBe(404);
  });
});

describe('a post whose message is not the newest', () => {
  it('commits once, is counted, and leaves the newer last message in place', async () => {
    const id = await newConversation();
    const before = await read(id);
    // A newer message already last (as when a post stamped later commits first): an hour ahead.
    const newer = {
      id: randomUUID(),
      senderType: 'operator',
      senderId: tenant.adminOperatorId,
      type: 'text',
      content: 'From the future',
      createdAt: new Date(Date.now() + 3_600_000).toISOString(),
    };
    const table = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: inject('endpoints').dynamodb }));
    await table.send(
      new UpdateCommand({
        TableName: inject('tableName'),
        Key: keys.conversation(tenant.orgId, id),
        UpdateExpression: 'SET lastMessage = :preview, lastMessageAt = :at',
        ExpressionAttributeValues: { ':preview': newer, ':at': newer.createdAt },
      }),
    );

    const answer = await post(id, 0);

    expect(answer.status).toBe(201);
    const after = await read(id);
    expect(after.messageCount).toBe(before.messageCount + 1);
    expect(after.unreadCount).toBe(before.unreadCount + 1);
    expect(after.lastMessage?.id).toBe(newer.id);
    expect(after.lastMessageAt).toBe(newer.createdAt);
    const listed = await call<{ data: Message[] }>('GET', `/api/conversations/${id}/messages`, {
      token: tenant.apiKey,
    });
    expect(listed.body.data.map((message) => message.id)).toEqual([answer.body.id]);
    const events = await eventually(
      async () => (await messageEvents()).filter((event) => event.data.id === answer.body.id),
      (found) => found.length >= 1,
      { intervalMs: 500 },
    );
    expect(events).toHaveLength(1);
  });
});

/** The organization's `first_responses` figure over the default export window (which holds today). */
async function firstResponsesCounted(of: Tenant): Promise<number> {
  const response = await call('GET', '/api/export/analytics', { token: of.apiKey });
  expect(response.status, response.text).toBe(200);
  const rows = response.text.split('\r\n').map((line) => line.split(','));
  return rows
    .filter(([metric]) => metric === 'first_responses')
    .reduce((total, [, value]) => total + Number(value), 0);
}

describe('the first response of a busy conversation', () => {
  it('is recorded and counted exactly once when many operator messages answer at once', async () => {
    const own = await createTenant();
    const ownVisitor = await createVisitor(own.widgetKey);
    const created = await call<Conversation>('POST', '/api/conversations', {
      token: ownVisitor.token,
      body: { message: 'Hello?' },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;

    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, n) =>
        call<Message>('POST', `/api/conversations/${id}/messages`, {
          token: n % 2 ? own.operatorSession : own.apiKey,
          body:
            n % 2 ? { content: `Answer ${n}` } : { content: `Answer ${n}`, operatorId: own.adminOperatorId },
        }),
      ),
    );
    expect(answers.map((answer) => answer.status).filter((status) => status !== 201)).toEqual([]);
    const after = (await call<Conversation>('GET', `/api/conversations/${id}`, { token: own.apiKey })).body;
    const first = Math.min(...answers.map((answer) => Date.parse(answer.body.createdAt)));
    const last = Math.max(...answers.map((answer) => Date.parse(answer.body.createdAt)));
    const opened = Date.parse(created.body.createdAt);
    expect(after.firstResponseTimeMs).toBeGreaterThanOrEqual(first - opened);
    expect(after.firstResponseTimeMs).toBeLessThanOrEqual(last - opened);
    expect(await firstResponsesCounted(own)).toBe(1);
  });

  it('is finished by a later operator message when the one that claimed it never recorded it', async () => {
    const own = await createTenant();
    const ownVisitor = await createVisitor(own.widgetKey);
    const created = await call<Conversation>('POST', '/api/conversations', {
      token: ownVisitor.token,
      body: { message: 'Hello?' },
    });
    const id = created.body.id;
    // A post that claimed the first response and then crashed, two minutes ago.
    const table = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: inject('endpoints').dynamodb }));
    await table.send(
      new UpdateCommand({
        TableName: inject('tableName'),
        Key: keys.conversation(own.orgId, id),
        UpdateExpression: 'SET firstResponseClaim = :claim',
        ExpressionAttributeValues: {
          ':claim': {
            messageId: 'crashed',
            createdAt: new Date(Date.now() - 120_000).toISOString(),
            timeMs: 1,
          },
        },
      }),
    );
    const read = async () =>
      (await call<Conversation>('GET', `/api/conversations/${id}`, { token: own.apiKey })).body;
    expect((await read()).firstResponseTimeMs).toBeNull();

    for (const content of ['Sorry for the wait', 'Anything else?']) {
      const answer = await call('POST', `/api/conversations/${id}/messages`, {
        token: own.operatorSession,
        body: { content },
      });
      expect(answer.status).toBe(201);
      // The claim's time, not this message's: the crashed post answered first.
      expect((await read()).firstResponseTimeMs).toBe(1);
    }
    expect(await firstResponsesCounted(own)).toBe(1);
  });
});
