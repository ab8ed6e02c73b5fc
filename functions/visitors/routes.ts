import { getVisitor, listVisitors, updateVisitor, upsertVisitor } from './contacts';
import { eraseVisitor, mergeVisitor } from './lifecycle';

export const visitorRoutes = [
  listVisitors,
  upsertVisitor,
  getVisitor,
  updateVisitor,
  mergeVisitor,
  eraseVisitor,
];
