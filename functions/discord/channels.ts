import { discordChannels, MAX_DISCORD_CHANNELS } from '../../shared/db/discord-channels';
import { ConflictError } from '../../shared/errors';
import { created, ok, route } from '../../shared/http/route';
import { pageOf, successResult } from '../../shared/schemas/common';
import {
  createDiscordChannelBody,
  type DiscordChannel,
  discordChannel,
  discordChannelList,
  discordChannelListQuery,
  discordChannelParams,
} from '../../shared/schemas/discord';
import { examplePage } from '../../shared/schemas/examples';

/**
 * Discord's REST client, with the webhooks' outbound guard under it (ipaddr.js, the bot token's
 * secret read), loaded by the first channel created: listing and removing channels never call
 * Discord, so the function's cold start does not pay for it.
 */
let discordClient: Promise<typeof import('../../shared/discord/client')> | undefined;
const loadDiscordClient = () => (discordClient ??= import('../../shared/discord/client'));

const channelExample: DiscordChannel = {
  id: '019a7c23-4e00-7c11-8d22-5e33f44a5701',
  channelId: '1187654321098765432',
  name: 'support-alerts',
  type: 0,
  events: ['new_conversation', 'conversation_closed'],
  createdAt: '2026-11-21T10:30:00.000Z',
  updatedAt: '2026-11-21T10:30:00.000Z',
};

const NOTIFICATIONS =
  "Each subscribed event (`new_conversation`, `conversation_assigned`, `conversation_closed`) posts one message to the channel from the event pipeline, a few seconds after the change (never from the request that made it): an embed of the conversation's title, status and priority and a summary of its latest message, at most 200 characters of a visitor's text, markdown, mentions and links made inert. Delivery is at least once: Discord's 429 `retry_after` is honoured, other failures are retried and finally dead-lettered.";

export const createDiscordChannel = route({
  method: 'POST',
  path: '/api/discord/channels',
  operationId: 'createDiscordChannel',
  summary: 'Notify a Discord channel',
  description: `The service asks Discord for the channel (with the platform's bot token) and stores its name and type. Discord's 403 (the bot may not see the channel) or 404 is 422 on \`channelId\`; Discord unreachable or failing is 502 \`UPSTREAM_ERROR\`; the same channel twice is 409; an organization has at most ${MAX_DISCORD_CHANNELS} channels (409 \`channel_limit_reached\`). ${NOTIFICATIONS}`,
  tag: 'Discord',
  scope: 'integrations:write',
  adminOnly: true,
  callers: ['apiKey', 'operator'],
  body: createDiscordChannelBody,
  response: { status: 201, schema: discordChannel, description: 'The channel configuration' },
  errors: [502],
  examples: {
    request: { channelId: channelExample.channelId, events: channelExample.events },
    response: channelExample,
  },
  handle: async ({ caller, body }) => {
    // Known already: 409 without asking Discord.
    const existing = await discordChannels.getByChannelId(caller.orgId, body.channelId);
    if (existing) {
      throw new ConflictError('This Discord channel is already configured', {
        field: 'channelId',
        reason: 'channel_exists',
      });
    }
    const found = await (await loadDiscordClient()).lookupChannel(body.channelId);
    return created(
      await discordChannels.create(caller.orgId, {
        channelId: body.channelId,
        name: found.name,
        type: found.type,
        events: body.events,
      }),
    );
  },
});

export const listDiscordChannels = route({
  method: 'GET',
  path: '/api/discord/channels',
  operationId: 'listDiscordChannels',
  summary: 'List Discord channels',
  description: `Offset page (\`offset\` 0, \`limit\` 20 by default, at most 100), oldest first. ${NOTIFICATIONS}`,
  tag: 'Discord',
  scope: 'integrations:read',
  callers: ['apiKey', 'operator'],
  query: discordChannelListQuery,
  response: { status: 200, schema: discordChannelList, description: 'A page of channels' },
  examples: { response: examplePage(channelExample) },
  handle: async ({ caller, query }) => {
    const all = (await discordChannels.all(caller.orgId, { consistent: true })).sort((a, b) =>
      a.id.localeCompare(b.id),
    );
    return ok(pageOf(all, query.offset, query.limit));
  },
});

export const deleteDiscordChannel = route({
  method: 'DELETE',
  path: '/api/discord/channels/{id}',
  operationId: 'deleteDiscordChannel',
  summary: 'Stop notifying a Discord channel',
  description:
    'Notifications not yet posted to it are dropped. 404 when the organization has no such channel.',
  tag: 'Discord',
  scope: 'integrations:write',
  callers: ['apiKey', 'operator'],
  params: discordChannelParams,
  response: { status: 200, schema: successResult, description: 'Removed' },
  errors: [404],
  examples: { response: { success: true } },
  handle: async ({ caller, params }) => {
    await discordChannels.remove(caller.orgId, params.id);
    return ok({ success: true });
  },
});
