import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import { uuidv7 } from '../ids';
import { db, tableName } from './client';
import { keys } from './keys';
import type { TransactItem } from './transaction';

/** Who acted, as the organization's audit trail names them: the platform admin included. */
export interface AuditActor {
  type: 'platform' | 'api_key' | 'operator' | 'visitor';
  id: string;
}

/** One entry of the organization's audit trail (`ORG#o#AUDIT`, kept). */
export interface OrgAuditEntry {
  /** What happened, e.g. `impersonation.started`, `impersonation.request`, `impersonation.stopped`. */
  action: string;
  actor: AuditActor;
  [detail: string]: unknown;
}

function auditItem(orgId: string, entry: OrgAuditEntry) {
  const id = uuidv7();
  return {
    ...keys.orgAudit(orgId, id),
    entity: 'orgAudit',
    id,
    organizationId: orgId,
    at: clock.nowIso(),
    ...entry,
  };
}

export const orgAudit = {
  /** An entry as an action of the transaction of its change. */
  write(orgId: string, entry: OrgAuditEntry): TransactItem {
    return { Put: { TableName: tableName, Item: auditItem(orgId, entry) } };
  },

  /** An entry on its own: one PutItem. */
  async record(orgId: string, entry: OrgAuditEntry): Promise<void> {
    await db.send(new PutCommand({ TableName: tableName, Item: auditItem(orgId, entry) }));
  },
};
