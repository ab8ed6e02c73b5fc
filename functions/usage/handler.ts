import { createHandler } from '../../shared/http/stack';
import { usageRoutes } from './routes';

export const handler = createHandler(usageRoutes);
