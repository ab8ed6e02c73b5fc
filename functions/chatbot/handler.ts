import { createHandler } from '../../shared/http/stack';
import { chatbotRoutes } from './routes';

export const handler = createHandler(chatbotRoutes);
