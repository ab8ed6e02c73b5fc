import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import { ConflictError, NotFoundError } from '../errors';
import { uuidv7 } from '../ids';
import type { DiscordChannel } from '../schemas/discord';
import { discordChannelProjection } from '../schemas/projections';
import { db, tableName } from './client';
import { keys } from './keys';
import { project } from './project';
import { queryPrefix } from './query';
import { retryOnConflict, transact } from './transaction';

export type { DiscordChannel };

/** Channels one organization may have: bounds the notifications one event fans out to. */
export const MAX_DISCORD_CHANNELS = 50;

/** The channel as the API shows it (the schema's fields, by a projection without zod). */
const toChannel = project<DiscordChannel>(discordChannelProjection);

export const discordChannels = {
  toChannel,

  /**
   * Adds the channel, keyed by Discord's id so the same channel twice is 409, and counts it against
   * the organization's limit, in one transaction.
   */
  async create(
    orgId: string,
    input: Pick<DiscordChannel, 'channelId' | 'name' | 'type' | 'events'>,
  ): Promise<DiscordChannel> {
    const now = clock.nowIso();
    const channel: DiscordChannel = { id: uuidv7(), ...input, createdAt: now, updatedAt: now };
    // Two channels added at once both count: one transaction loses on the totals and runs again.
    await retryOnConflict(() =>
      transact([
        {
          action: {
            Put: {
              TableName: tableName,
              Item: { ...keys.discordChannel(orgId, input.channelId), entity: 'discordChannel', ...channel },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          onConditionFailed: () =>
            new ConflictError('This Discord channel is already configured', {
              field: 'channelId',
              reason: 'channel_exists',
            }),
        },
        {
          action: {
            Update: {
              TableName: tableName,
              Key: keys.discordChannelTotals(orgId),
              UpdateExpression: 'ADD channels :one',
              ConditionExpression: 'attribute_not_exists(channels) OR channels < :max',
              ExpressionAttributeValues: { ':one': 1, ':max': MAX_DISCORD_CHANNELS },
            },
          },
          onConditionFailed: () =>
            new ConflictError(
              `An organization may configure at most ${MAX_DISCORD_CHANNELS} Discord channels`,
              {
                reason: 'channel_limit_reached',
              },
            ),
        },
      ]),
    );
    return channel;
  },

  /** Every channel of the organization (at most 50): one Query. */
  async all(orgId: string, options: { consistent?: boolean } = {}): Promise<DiscordChannel[]> {
    const items = await queryPrefix(keys.discordChannelsPartition(orgId), keys.discordChannelPrefix, options);
    return items.map(toChannel);
  },

  /** The channel configured for Discord's channel id, strongly consistent. */
  async getByChannelId(orgId: string, discordChannelId: string): Promise<DiscordChannel | undefined> {
    const { Item } = await db.send(
      new GetCommand({
        TableName: tableName,
        Key: keys.discordChannel(orgId, discordChannelId),
        ConsistentRead: true,
      }),
    );
    return Item ? toChannel(Item) : undefined;
  },

  /**
   * Removes the channel with this id: one consistent Query of the (small) partition finds its key,
   * then one transaction deletes it (only if it is still that one) and uncounts it. 404 otherwise.
   */
  async remove(orgId: string, id: string): Promise<void> {
    await retryOnConflict(() => removeOnce(orgId, id));
  },
};

/**
 * One attempt at removing the channel with this id: one consistent Query of the (small) partition
 * finds its key, then one transaction deletes it (only if it is still that one) and uncounts it.
 */
async function removeOnce(orgId: string, id: string): Promise<void> {
  const found = (await discordChannels.all(orgId, { consistent: true })).find((channel) => channel.id === id);
  if (!found) throw new NotFoundError('Discord channel not found');
  await transact([
    {
      action: {
        Delete: {
          TableName: tableName,
          Key: keys.discordChannel(orgId, found.channelId),
          ConditionExpression: 'id = :id',
          ExpressionAttributeValues: { ':id': id },
        },
      },
      onConditionFailed: () => new NotFoundError('Discord channel not found'),
    },
    {
      action: {
        Update: {
          TableName: tableName,
          Key: keys.discordChannelTotals(orgId),
          UpdateExpression: 'ADD channels :minus',
          ExpressionAttributeValues: { ':minus': -1 },
        },
      },
    },
  ]);
}
