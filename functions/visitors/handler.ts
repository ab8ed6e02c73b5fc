import { createHandler } from '../../shared/http/stack';
import { visitorRoutes } from './routes';

export const handler = createHandler(visitorRoutes);
