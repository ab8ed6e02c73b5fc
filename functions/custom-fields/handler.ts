import { createHandler } from '../../shared/http/stack';
import { customFieldRoutes } from './routes';

export const handler = createHandler(customFieldRoutes);
