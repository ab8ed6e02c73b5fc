import { createDiscordChannel, deleteDiscordChannel, listDiscordChannels } from './channels';

export const discordRoutes = [createDiscordChannel, listDiscordChannels, deleteDiscordChannel];
