import { createVisitor } from './create-visitor';

export const widgetRoutes = [createVisitor];
