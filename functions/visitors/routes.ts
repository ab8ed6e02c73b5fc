import { getVisitor, listVisitors, updateVisitor, upsertVisitor } from './contacts';

export const visitorRoutes = [listVisitors, upsertVisitor, getVisitor, updateVisitor];
