import { beforeAll, describe, expect, inject, it } from 'vitest';
import { call, createApiKey, createTenant, createVisitor, type Tenant } from '../helpers/api';
import { eventually } from '../helpers/eventually';
import { channelIdForTest, fakeDiscordControl, type PostedMessage } from '../helpers/fake-discord';

/**
 * Discord channels and their notifications, against the fake Discord API the global setup started
 * (DISCORD_API_BASE_URL). Notifications travel the event pipeline: the conversation write commits
 * its event, the stream fan-out queues one job per subscribed channel, the delivery worker posts it.
 */
interface Channel {
  id: string;
  channelId: string;
  name: string;
  type: number;
  events: string[];
  createdAt: string;
  updatedAt: string;
}
interface ErrorBody {
  error: { code: string; details?: { field?: string; reason?: string } };
}
interface Embed {
  title: string;
  description: string;
  fields: { name: string; value: string }[];
  footer: { text: string };
}

const discord = () => fakeDiscordControl(inject('fakeDiscordUrl'));
const ZWSP = '\u200b';
/** What a person reads: escapes and zero-width spaces removed. */
const visible = (text: string) => text.replaceAll(ZWSP, '').replace(/\\(.)/g, '$1');

let tenant: Tenant;

beforeAll(async () => {
  tenant = await createTenant();
});

async function addChannel(
  events: string[],
  behaviour: Parameters<ReturnType<typeof discord>['channel']>[1] = {},
) {
  const channelId = channelIdForTest();
  await discord().channel(channelId, behaviour);
  const response = await call<Channel>('POST', '/api/discord/channels', {
    token: tenant.apiKey,
    body: { channelId, events },
  });
  expect(response.status, response.text).toBe(201);
  return response.body;
}

async function startConversation(body: Record<string, unknown> = {}) {
  const visitor = await createVisitor(tenant.widgetKey);
  const response = await call<{ id: string }>('POST', '/api/conversations', {
    token: tenant.apiKey,
    body: { visitorId: visitor.visitor.id, ...body },
  });
  expect(response.status, response.text).toBe(201);
  return response.body.id;
}

/** Waits until the channel has `count` messages, then a little longer to be sure no more come. */
async function messagesOf(channelId: string, count: number): Promise<PostedMessage[]> {
  await eventually(
    () => discord().received(channelId),
    (received) => received.messages.length >= count,
    { timeoutMs: 15_000 },
  );
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  return (await discord().received(channelId)).messages;
}

describe('POST /api/discord/channels', () => {
  it("stores the channel's name and integer type as Discord gives them", async () => {
    const channelId = channelIdForTest();
    await discord().channel(channelId, { name: 'support-alerts', type: 5 });

    const response = await call<Channel>('POST', '/api/discord/channels', {
      token: tenant.adminSession,
      body: { channelId, events: ['new_conversation', 'conversation_closed'] },
    });

    expect(response.status, response.text).toBe(201);
    expect(response.body).toMatchObject({
      channelId,
      name: 'support-alerts',
      type: 5,
      events: ['new_conversation', 'conversation_closed'],
    });
    expect(response.body.id).toMatch(/^[0-9a-f-]{36}$/);
    const listed = await call<{ data: Channel[] }>('GET', '/api/discord/channels', { token: tenant.apiKey });
    expect(listed.body.data).toContainEqual(response.body);
  });

  it.each([
    ['unknown to Discord (404)', undefined, 'channel_not_found'],
    ['hidden from the bot (403)', { lookup: 'forbidden' as const }, 'channel_not_accessible'],
  ])('is 422 on channelId for a channel %s', async (_what, behaviour, reason) => {
    const channelId = channelIdForTest();
    if (behaviour) await discord().channel(channelId, behaviour);

    const response = await call<ErrorBody>('POST', '/api/discord/channels', {
      token: tenant.apiKey,
      body: { channelId, events: ['new_conversation'] },
    });

    expect(response.status, response.text).toBe(422);
    expect(response.body.error.code).toBe('VALIDATION_ERROR');
    expect(response.body.error.details).toMatchObject({ field: 'channelId', reason });
  });

  it.each([
    ['failing (500)', 'error' as const],
    ['unreachable (connection dropped)', 'reset' as const],
  ])('is 502 UPSTREAM_ERROR when Discord is %s, and stores nothing', async (_what, lookup) => {
    const channelId = channelIdForTest();
    await discord().channel(channelId, { lookup });

    const response = await call<ErrorBody>('POST', '/api/discord/channels', {
      token: tenant.apiKey,
      body: { channelId, events: ['new_conversation'] },
    });

    expect(response.status, response.text).toBe(502);
    expect(response.body.error.code).toBe('UPSTREAM_ERROR');
    const listed = await call<{ data: Channel[] }>('GET', '/api/discord/channels', { token: tenant.apiKey });
    expect(listed.body.data.map((channel) => channel.channelId)).not.toContain(channelId);
  });

  it('is 409 for the same channel twice in one organization, also when both arrive at once', async () => {
    const channelId = channelIdForTest();
    await discord().channel(channelId);
    const add = () =>
      call<ErrorBody>('POST', '/api/discord/channels', {
        token: tenant.apiKey,
        body: { channelId, events: ['new_conversation'] },
      });

    const statuses = (await Promise.all([add(), add(), add()])).map((response) => response.status).sort();
    const again = await add();

    expect(statuses).toEqual([201, 409, 409]);
    expect(again.status).toBe(409);
    expect(again.body.error.details?.field).toBe('channelId');
  });

  it('lets another organization add the same channel', async () => {
    const channelId = channelIdForTest();
    await discord().channel(channelId);
    const other = await createTenant();
    const body = { channelId, events: ['new_conversation'] };

    const first = await call('POST', '/api/discord/channels', { token: tenant.apiKey, body });
    const second = await call('POST', '/api/discord/channels', { token: other.apiKey, body });

    expect([first.status, second.status]).toEqual([201, 201]);
  });

  it('refuses malformed input, and callers without the right', async () => {
    const channelId = channelIdForTest();
    await discord().channel(channelId);
    const post = (token: string, body: unknown) =>
      call<ErrorBody>('POST', '/api/discord/channels', { token, body });
    const readOnly = await createApiKey(tenant.orgId, ['integrations:read']);

    const notSnowflake = await post(tenant.apiKey, { channelId: '12ab', events: ['new_conversation'] });
    const unknownEvent = await post(tenant.apiKey, { channelId, events: ['message.created'] });
    const noEvents = await post(tenant.apiKey, { channelId, events: [] });
    const operator = await post(tenant.operatorSession, { channelId, events: ['new_conversation'] });
    const scoped = await post(readOnly.key, { channelId, events: ['new_conversation'] });

    expect(notSnowflake.status).toBe(422);
    expect(notSnowflake.body.error.details?.field).toBe('channelId');
    expect(unknownEvent.status).toBe(422);
    expect(noEvents.status).toBe(422);
    expect(operator.status).toBe(403);
    expect(scoped.status).toBe(403);
  });
});

describe('GET and DELETE /api/discord/channels', () => {
  it("keeps each organization's channels to itself", async () => {
    const mine = await addChannel(['new_conversation']);
    const other = await createTenant();

    const theirList = await call<{ data: Channel[] }>('GET', '/api/discord/channels', {
      token: other.apiKey,
    });
    const theirDelete = await call('DELETE', `/api/discord/channels/${mine.id}`, { token: other.apiKey });
    const myList = await call<{ data: Channel[] }>('GET', '/api/discord/channels', {
      token: tenant.operatorSession,
    });

    expect(theirList.body.data).toEqual([]);
    expect(theirDelete.status).toBe(404);
    expect(myList.body.data.map((channel) => channel.id)).toContain(mine.id);
  });

  it('deletes a channel once (then 404), and the channel can be added again', async () => {
    const channel = await addChannel(['new_conversation']);

    const deleted = await call('DELETE', `/api/discord/channels/${channel.id}`, {
      token: tenant.operatorSession,
    });
    const again = await call('DELETE', `/api/discord/channels/${channel.id}`, { token: tenant.apiKey });
    const listed = await call<{ data: Channel[] }>('GET', '/api/discord/channels', { token: tenant.apiKey });
    const readded = await call<Channel>('POST', '/api/discord/channels', {
      token: tenant.apiKey,
      body: { channelId: channel.channelId, events: ['conversation_closed'] },
    });

    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true });
    expect(again.status).toBe(404);
    expect(listed.body.data.map((entry) => entry.id)).not.toContain(channel.id);
    expect(readded.status).toBe(201);
    expect(readded.body.id).not.toBe(channel.id);
  });
});

describe('notifications', () => {
  it('posts one message per new conversation, built from its fields, with visitor text made inert', async () => {
    const channel = await addChannel(['new_conversation']);
    const longText = `@everyone look **here** https://evil.example/x <@123456789012345678> ${'a'.repeat(400)}`;

    const conversationId = await startConversation({
      title: '# Urgent @here [click](https://x.example)',
      message: longText,
    });
    const [message, ...more] = await messagesOf(channel.channelId, 1);

    expect(more).toEqual([]);
    const body = message?.body as {
      embeds: Embed[];
      allowed_mentions: { parse: string[] };
      content?: string;
    };
    expect(body.allowed_mentions).toEqual({ parse: [] });
    expect(body.content).toBeUndefined();
    const [embed] = body.embeds;
    if (!embed) throw new Error('no embed');
    expect(embed.footer.text).toBe(`Conversation ${conversationId}`);
    expect(embed.fields).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'Status', value: 'open' }),
        expect.objectContaining({ name: 'Priority', value: 'normal' }),
      ]),
    );
    const text = JSON.stringify(body);
    // No mention can resolve and no link is clickable, wherever visitor text went.
    for (const forbidden of [
      '@everyone',
      '@here',
      '<@123456789012345678>',
      'https://',
      '**here**',
      '[click](',
    ]) {
      expect(text).not.toContain(forbidden);
    }
    // The visitor's words are there, readable, and at most 200 characters of them.
    expect(visible(embed.description).startsWith('@everyone look **here** https://evil.example/x')).toBe(
      true,
    );
    expect(Array.from(visible(embed.description)).length).toBeLessThanOrEqual(200);
    expect(visible(embed.title)).toBe('New conversation: # Urgent @here [click](https://x.example)');
    const { attempts } = await discord().received(channel.channelId);
    expect(attempts.every((attempt) => attempt.authorization === `Bot ${inject('discordBotToken')}`)).toBe(
      true,
    );
  });

  it('posts only the events a channel subscribed to', async () => {
    const closedOnly = await addChannel(['conversation_closed']);
    const assignedOnly = await addChannel(['conversation_assigned']);

    const conversationId = await startConversation({ message: 'Hello' });
    const assigned = await call('PATCH', `/api/conversations/${conversationId}`, {
      token: tenant.apiKey,
      body: { operatorId: tenant.operatorId },
    });
    const closed = await call('PATCH', `/api/conversations/${conversationId}`, {
      token: tenant.apiKey,
      body: { status: 'closed' },
    });

    expect([assigned.status, closed.status]).toEqual([200, 200]);
    const [closedMessage, ...moreClosed] = await messagesOf(closedOnly.channelId, 1);
    const [assignedMessage, ...moreAssigned] = await messagesOf(assignedOnly.channelId, 1);
    expect([moreClosed, moreAssigned]).toEqual([[], []]);
    const embedOf = (message: PostedMessage | undefined) =>
      (message?.body as { embeds?: Embed[] } | undefined)?.embeds?.[0];
    expect(embedOf(closedMessage)?.title).toMatch(/^Conversation closed: /);
    expect(embedOf(assignedMessage)?.title).toMatch(/^Conversation assigned: /);
    const operatorField = embedOf(assignedMessage)?.fields.find((field) => field.name === 'Operator');
    expect(visible(operatorField?.value ?? '')).toBe(tenant.operatorId);
  });

  it("waits out Discord's 429 retry_after, in place for a short one, and posts once", async () => {
    const channel = await addChannel(['new_conversation'], { rateLimits: [0.6] });

    await startConversation({ message: 'Rate limited, shortly' });
    const messages = await messagesOf(channel.channelId, 1);
    const { attempts } = await discord().received(channel.channelId);

    expect(messages).toHaveLength(1);
    expect(attempts.map((attempt) => attempt.status)).toEqual([429, 200]);
    const [limited, posted] = attempts;
    expect((posted?.at ?? 0) - (limited?.at ?? 0)).toBeGreaterThanOrEqual(600);
  });

  it('sends a longer 429 back to the queue with its delay, and posts once after it', async () => {
    const channel = await addChannel(['new_conversation'], { rateLimits: [3] });

    await startConversation({ message: 'Rate limited, longer' });
    const messages = await messagesOf(channel.channelId, 1);
    const { attempts } = await discord().received(channel.channelId);

    expect(messages).toHaveLength(1);
    expect(attempts.map((attempt) => attempt.status)).toEqual([429, 200]);
    const [limited, posted] = attempts;
    expect((posted?.at ?? 0) - (limited?.at ?? 0)).toBeGreaterThanOrEqual(3_000);
  });

  it('retries a failing Discord (5xx) and posts once it recovers', async () => {
    const channel = await addChannel(['new_conversation'], { failures: 2 });

    await startConversation({ message: 'Discord is having a bad day' });
    const messages = await messagesOf(channel.channelId, 1);
    const { attempts } = await discord().received(channel.channelId);

    expect(messages).toHaveLength(1);
    expect(attempts.map((attempt) => attempt.status)).toEqual([500, 500, 200]);
  });

  it('posts nothing to a channel deleted before the event', async () => {
    const channel = await addChannel(['new_conversation']);
    await call('DELETE', `/api/discord/channels/${channel.id}`, { token: tenant.apiKey });

    await startConversation({ message: 'Nobody listens' });
    await new Promise((resolve) => setTimeout(resolve, 3_000));

    expect((await discord().received(channel.channelId)).attempts).toEqual([]);
  });
});
