import { createHandler } from '../../shared/http/stack';
import { webhookRoutes } from './routes';

export const handler = createHandler(webhookRoutes);
