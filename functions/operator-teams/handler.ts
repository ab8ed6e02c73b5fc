import { createHandler } from '../../shared/http/stack';
import { operatorTeamRoutes } from './routes';

export const handler = createHandler(operatorTeamRoutes);
