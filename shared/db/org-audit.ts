import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { OrgCaller, PlatformCaller } from '../auth/caller';
import { clock } from '../clock';
import { uuidv7 } from '../ids';
import { db, tableName, ttlSeconds } from './client';
import { keys } from './keys';
import type { TransactItem } from './transaction';

/** Who acted, as the organization's audit log names them: the platform admin and the service included. */
export interface AuditActor {
  type: 'platform' | 'api_key' | 'operator' | 'visitor' | 'system';
  id: string;
  /** Stored when the writer knows it (an API key's name); operators' names are read with the page. */
  name?: string | null;
}

/** What an entry is about: `{ type: 'webhook', id }`, `{ type: 'conversation', id }`… */
export interface AuditTarget {
  type: string;
  id: string;
}

/** One entry of the organization's audit log (`ORG#o#AUDIT`, kept 365 days). */
export interface OrgAuditEntry {
  /** What happened: `webhook.created`, `impersonation.started`, `impersonation.request`… */
  type: string;
  actor: AuditActor;
  /** The platform actor's id when the action was done under impersonation. */
  impersonatedBy?: string | null;
  target: AuditTarget;
  details?: Record<string, unknown>;
}

/** Who did it, as every audited write takes it (`auditActorOf`). */
export type AuditBy = Pick<OrgAuditEntry, 'actor' | 'impersonatedBy'>;

/** The contract's retention: "kept at least 365 days" (TTL; readers filter on it too). */
export const AUDIT_RETENTION_DAYS = 365;
const RETENTION_MS = AUDIT_RETENTION_DAYS * 86_400_000;

/** The platform administrator's display name in the log. */
const PLATFORM_NAME = 'Platform administrator';

/**
 * The actor of an action and, under impersonation, who impersonates: an impersonated operator acts
 * as itself, the entry carries `impersonatedBy` = the platform credential.
 */
export function auditActorOf(caller: OrgCaller | PlatformCaller): AuditBy {
  switch (caller.kind) {
    case 'platform':
      return {
        actor: { type: 'platform', id: caller.credentialId, name: PLATFORM_NAME },
        impersonatedBy: null,
      };
    case 'operator':
      return {
        actor: { type: 'operator', id: caller.operatorId },
        impersonatedBy: caller.impersonatedBy ?? null,
      };
    case 'visitor':
      return { actor: { type: 'visitor', id: caller.visitorId }, impersonatedBy: null };
    case 'apiKey':
      return { actor: { type: 'api_key', id: caller.credentialId, name: caller.name }, impersonatedBy: null };
    default:
      return { actor: { type: 'system', id: 'system', name: 'system' }, impersonatedBy: null };
  }
}

/** The service itself (workers finishing what a request started). */
export const systemActor: AuditBy = {
  actor: { type: 'system', id: 'system', name: 'system' },
  impersonatedBy: null,
};

function auditItem(orgId: string | null, entry: OrgAuditEntry) {
  // One reading of the clock for the id and `at`, so the time bounds of a listing can be key bounds.
  const nowMs = clock.nowMs();
  const id = uuidv7(nowMs);
  return {
    ...keys.orgAudit(orgId, id),
    entity: 'orgAudit',
    id,
    organizationId: orgId ?? null,
    at: new Date(nowMs).toISOString(),
    type: entry.type,
    actor: entry.actor,
    impersonatedBy: entry.impersonatedBy ?? null,
    target: entry.target,
    details: entry.details ?? {},
    expiresAt: ttlSeconds(nowMs + RETENTION_MS),
  };
}

export const orgAudit = {
  /** An entry as an action of the transaction of its change. */
  write(orgId: string | null, entry: OrgAuditEntry): TransactItem {
    return { Put: { TableName: tableName, Item: auditItem(orgId, entry) } };
  },

  /** An entry on its own: one PutItem (for actions that are no table write: a stream, an e-mail). */
  async record(orgId: string | null, entry: OrgAuditEntry): Promise<void> {
    await db.send(new PutCommand({ TableName: tableName, Item: auditItem(orgId, entry) }));
  },
};
