import { createHandler } from '../../shared/http/stack';
import { kbRoutes } from './routes';

export const handler = createHandler(kbRoutes);
