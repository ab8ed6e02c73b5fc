import { createHandler } from '../../shared/http/stack';
import { conversationRoutes } from './routes';

export const handler = createHandler(conversationRoutes);
