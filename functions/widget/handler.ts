import { createHandler } from '../../shared/http/stack';
import { widgetRoutes } from './routes';

export const handler = createHandler(widgetRoutes);
