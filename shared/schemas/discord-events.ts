/**
 * The event types a Discord channel can be notified of, without zod: the Discord delivery worker
 * checks its jobs' event against them and bundles no zod (31 KB of its minified bundle, and
 * several ms of its cold import); ./discord.ts builds its schemas from them. The worker reads
 * channels through a zod-free projection (./projections.ts).
 */

/** What a Discord channel can be notified of, and the domain event each one follows. */
export const discordEventTypes = [
  'new_conversation',
  'conversation_assigned',
  'conversation_closed',
] as const;
export type DiscordEventType = (typeof discordEventTypes)[number];
