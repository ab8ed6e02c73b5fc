import { describe, expect, it } from 'vitest';
import { discordChannels } from '../../shared/db/discord-channels';
import { pickShape } from '../../shared/db/project';
import { createDiscordChannelBody, discordChannel } from '../../shared/schemas/discord';
import { discordChannelFields, discordEventTypes } from '../../shared/schemas/discord-fields';
import { built } from '../../shared/schemas/names';

/**
 * The data layer projects Discord channels onto a field-name list, and the delivery worker checks
 * events against a list, both without zod (so the worker bundles none); the API answers with what
 * they project and validates with the same event list. The compiler checks that the schema
 * declares the same names; this checks the order, which is the order of every answer's fields.
 */

const stored = {
  pk: 'ORG#o',
  sk: 'DISCORD#123456789012345678',
  entity: 'discordChannel',
  // Stored in another order than the schema's, as DynamoDB reads back.
  updatedAt: '2026-11-21T10:00:01.000Z',
  events: ['new_conversation'],
  type: 0,
  name: 'support',
  channelId: '123456789012345678',
  id: '0190a3c4-7e51-7def-a000-0000000000cc',
  createdAt: '2026-11-21T10:00:00.000Z',
};

describe('Discord field lists', () => {
  it('are the fields of the DiscordChannel schema, in its order', () => {
    expect(Object.keys(built(discordChannel).shape)).toEqual([...discordChannelFields]);
  });

  it('project stored items as the schema does', () => {
    const projected = discordChannels.toChannel(stored);
    const bySchema = pickShape<object>(built(discordChannel).shape, stored);
    expect(projected).toStrictEqual(bySchema);
    expect(Object.keys(projected)).toEqual(Object.keys(bySchema));
    expect(Object.keys(projected)).not.toContain('pk');
  });

  it('are the events the API takes', () => {
    const body = (events: unknown) =>
      createDiscordChannelBody.safeParse({ channelId: stored.channelId, events });
    expect(body([...discordEventTypes]).success).toBe(true);
    expect(body(['conversation.created']).success).toBe(false);
  });
});
