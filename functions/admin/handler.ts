import { createHandler } from '../../shared/http/stack';
import { adminRoutes } from './routes';

export const handler = createHandler(adminRoutes);
