/**
 * The Discord values that schemas and zod-free code share, without zod: the event types a channel
 * can be notified of, and the fields of the DiscordChannel resource, by name and in order. The
 * Discord delivery worker checks its jobs' event against the first and reads channels through the
 * second, so it bundles no zod (31 KB of its minified bundle, and several ms of its cold import).
 * ./discord.ts builds its schemas from these: the compiler checks the channel schema declares
 * exactly these fields (`ShapeOf`), test/unit/discord-fields.test.ts checks their order.
 */

/** What a Discord channel can be notified of, and the domain event each one follows. */
export const discordEventTypes = [
  'new_conversation',
  'conversation_assigned',
  'conversation_closed',
] as const;
export type DiscordEventType = (typeof discordEventTypes)[number];

export const discordChannelFields = [
  'id',
  'channelId',
  'name',
  'type',
  'events',
  'createdAt',
  'updatedAt',
] as const;
