import { describe, expect, it } from 'vitest';
import { createDiscordChannelBody } from '../../shared/schemas/discord';
import { discordEventTypes } from '../../shared/schemas/discord-events';

/**
 * The delivery worker checks events against a list without zod (so it bundles none); the API
 * validates channels with the schema built from the same list.
 */
describe('Discord event types', () => {
  it('are the events the API takes', () => {
    const body = (events: unknown) =>
      createDiscordChannelBody.safeParse({ channelId: '123456789012345678', events });
    expect(body([...discordEventTypes]).success).toBe(true);
    expect(body(['conversation.created']).success).toBe(false);
  });
});
