import { listAuditEvents, listPlatformAuditEvents } from './list-audit-events';

export const auditRoutes = [listAuditEvents, listPlatformAuditEvents];
