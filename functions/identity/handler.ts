import { createHandler } from '../../shared/http/stack';
import { identityRoutes } from './routes';

export const handler = createHandler(identityRoutes);
