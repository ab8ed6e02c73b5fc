import { createHandler } from '../../shared/http/stack';
import { eventRoutes } from './routes';

export const handler = createHandler(eventRoutes);
