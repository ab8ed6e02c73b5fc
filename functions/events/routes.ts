import { listEvents } from './list-events';

export const eventRoutes = [listEvents];
