import { createHandler } from '../../shared/http/stack';
import { searchRoutes } from './routes';

export const handler = createHandler(searchRoutes);
