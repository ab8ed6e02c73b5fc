/**
 * The event types a Discord channel can be notified of, without zod: the webhook fan-out, which
 * bundles no zod (test/infra/zod-free-bundles.test.ts), routes events to channels with them;
 * ./discord.ts builds its schemas from them.
 */

/** What a Discord channel can be notified of, and the domain event each one follows. */
export const discordEventTypes = [
  'new_conversation',
  'conversation_assigned',
  'conversation_closed',
] as const;
export type DiscordEventType = (typeof discordEventTypes)[number];
