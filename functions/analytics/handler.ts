import { createHandler } from '../../shared/http/stack';
import { analyticsRoutes } from './routes';

export const handler = createHandler(analyticsRoutes);
