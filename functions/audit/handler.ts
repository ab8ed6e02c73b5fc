import { createHandler } from '../../shared/http/stack';
import { auditRoutes } from './routes';

export const handler = createHandler(auditRoutes);
