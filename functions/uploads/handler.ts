import { createHandler } from '../../shared/http/stack';
import { uploadRoutes } from './routes';

export const handler = createHandler(uploadRoutes);
