import { createHandler } from '../../shared/http/stack';
import { discordRoutes } from './routes';

export const handler = createHandler(discordRoutes);
