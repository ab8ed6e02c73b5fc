import { listAuditEvents } from './list-audit-events';

export const auditRoutes = [listAuditEvents];
