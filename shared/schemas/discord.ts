import { isoInstant, offsetPage, offsetQuery, uuid } from './common';
import { discordEventTypes } from './discord-events';
import { lazily, named } from './names';
import * as z from './zod';

// Declared without zod (for the Discord delivery worker); the type stays importable from here.
export type { DiscordEventType } from './discord-events';

export const discordChannel = named(
  'DiscordChannel',
  () =>
    z.object({
      id: uuid,
      /** Discord's id of the channel (a snowflake). */
      channelId: z.string(),
      /** The channel's name as Discord gave it when the channel was added. */
      name: z.string(),
      /** Discord's channel type (0 text, 5 announcement, …). */
      type: z.int(),
      events: z.array(z.enum(discordEventTypes)),
      createdAt: isoInstant,
      updatedAt: isoInstant,
    }),
  'A Discord channel notified of conversation events',
);
export type DiscordChannel = z.infer<typeof discordChannel>;

export const createDiscordChannelBody = named('CreateDiscordChannelRequest', () =>
  z.strictObject({
    /** A Discord snowflake: 17 to 20 digits. */
    channelId: z
      .string()
      .check(z.maxLength(20), z.regex(/^\d{17,20}$/, 'Expected a Discord channel id (17 to 20 digits)')),
    events: z.array(z.enum(discordEventTypes)).check(
      z.minLength(1),
      z.maxLength(discordEventTypes.length),
      z.refine((events) => new Set(events).size === events.length, 'Each event at most once'),
    ),
  }),
);

export const discordChannelList = named('DiscordChannelPage', () => offsetPage(discordChannel));
export const discordChannelListQuery = lazily(() => z.strictObject(offsetQuery));
export const discordChannelParams = lazily(() => z.strictObject({ id: uuid }));
