import { BatchGetCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { output } from 'zod/v4/core';
import type { OperatorRole } from '../auth/caller';
import { mintOrgToken, type OrgTokenKind } from '../auth/tokens';
import { clock } from '../clock';
import type { createdApiKey } from '../schemas/organization';
import { createdApiKeyProjection } from '../schemas/projections';
import { db, tableName, ttlSeconds } from './client';
import { type Key, keys } from './keys';
import { type AuditBy, type OrgAuditEntry, orgAudit, systemActor } from './org-audit';
import { type Organization, organizations } from './organizations';
import { project } from './project';
import { ConcurrentChangeError, transact, transactUnlessConditionFails } from './transaction';
import { updateExpression } from './update-expression';

/**
 * Stored credentials: API keys, operator sessions and visitor tokens. Only the SHA-256 of a token is
 * stored; the token itself is returned once, at creation.
 */
export interface StoredCredential {
  kind: Exclude<OrgTokenKind, 'widgetKey'>;
  id: string;
  orgId: string;
  hash: string;
  createdAt: string;
  /** Epoch seconds (TTL attribute); absent for API keys. */
  expiresAt?: number;
  revokedAt?: string | null;
  name?: string;
  scopes?: string[];
  operatorId?: string;
  role?: OperatorRole;
  visitorId?: string;
  /** Impersonation sessions: the platform credential that acts as the operator. */
  impersonatedBy?: string;
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  scopes: string[];
  createdAt: string;
}

/** A new key as answered, its secret shown once: the record and the token, in the schema's order. */
const toCreatedApiKey = project<output<typeof createdApiKey>>(createdApiKeyProjection);

function credentialKey(kind: StoredCredential['kind'], orgId: string, id: string): Key {
  if (kind === 'apiKey') return keys.apiKey(orgId, id);
  if (kind === 'operatorSession') return keys.operatorSession(orgId, id);
  return keys.visitorToken(orgId, id);
}

export const credentials = {
  /**
   * The credential and its organization in one round trip: authentication of a cold request costs
   * one BatchGetItem, a warm one nothing (see shared/auth/authenticate.ts). Strongly consistent (two small
   * items: 2 read units instead of 1): a token used the moment it was minted (a login's session, a
   * new key, a widget's visitor token) must be found, and a revoked one read as revoked.
   */
  async getWithOrganization(
    kind: StoredCredential['kind'],
    orgId: string,
    id: string,
  ): Promise<{ credential?: StoredCredential; organization?: Organization }> {
    const credentialKeyValue = credentialKey(kind, orgId, id);
    const orgKey = keys.organization(orgId);
    const { Responses, UnprocessedKeys } = await db.send(
      new BatchGetCommand({
        RequestItems: { [tableName]: { Keys: [credentialKeyValue, orgKey], ConsistentRead: true } },
      }),
    );
    let items = Responses?.[tableName] ?? [];
    if (UnprocessedKeys?.[tableName]?.Keys?.length) {
      // Throttled halves of a batch are rare; read them directly rather than loop with backoff.
      const [credential, organization] = await Promise.all([
        db.send(new GetCommand({ TableName: tableName, Key: credentialKeyValue, ConsistentRead: true })),
        db.send(new GetCommand({ TableName: tableName, Key: orgKey, ConsistentRead: true })),
      ]);
      items = [credential.Item, organization.Item].filter((item) => item !== undefined);
    }
    const credentialItem = items.find(
      (item) => item.sk === credentialKeyValue.sk && item.pk === credentialKeyValue.pk,
    );
    const orgItem = items.find((item) => item.pk === orgKey.pk && item.sk === orgKey.sk);
    return {
      credential: credentialItem as StoredCredential | undefined,
      organization: orgItem ? organizations.fromItem(orgItem) : undefined,
    };
  },

  /** Creates an API key if the organization exists; `undefined` otherwise. */
  async createApiKey(orgId: string, input: { name: string; scopes: string[] }, by: AuditBy = systemActor) {
    const minted = mintOrgToken('apiKey', orgId);
    const record: ApiKeyRecord = {
      id: minted.credentialId,
      name: input.name,
      scopes: input.scopes,
      createdAt: clock.nowIso(),
    };
    const item: StoredCredential & { entity: string } = {
      entity: 'apiKey',
      kind: 'apiKey',
      orgId,
      hash: minted.hash,
      revokedAt: null,
      ...record,
    };
    // Read, not checked on the organization's item in the transaction (every credential and
    // operator write of the tenant would queue on it); organizations are never deleted.
    if (!(await organizations.get(orgId, { consistent: true }))) return undefined;
    const failed = await transactUnlessConditionFails([
      { Put: { TableName: tableName, Item: { ...keys.apiKey(orgId, record.id), ...item } } },
      orgAudit.write(orgId, {
        ...by,
        type: 'api_key.created',
        target: { type: 'api_key', id: record.id },
        details: { name: record.name, scopes: record.scopes },
      }),
    ]);
    if (failed !== undefined) throw new ConcurrentChangeError();
    return toCreatedApiKey({ ...record, key: minted.token });
  },

  /** Marks an active key revoked, with its audit entry; false when there is no such active key. */
  async revokeApiKey(orgId: string, keyId: string, by: AuditBy = systemActor): Promise<boolean> {
    const failed = await transactUnlessConditionFails([
      {
        Update: {
          TableName: tableName,
          Key: keys.apiKey(orgId, keyId),
          ...updateExpression(
            { set: { revokedAt: clock.nowIso() } },
            { expression: 'attribute_exists(pk) AND revokedAt = :null', values: { ':null': null } },
          ),
        },
      },
      orgAudit.write(orgId, { ...by, type: 'api_key.revoked', target: { type: 'api_key', id: keyId } }),
    ]);
    if (failed === 0) return false;
    if (failed !== undefined) throw new ConcurrentChangeError();
    return true;
  },

  async createOperatorSession(orgId: string, operatorId: string, role: OperatorRole, ttlHours: number) {
    const minted = mintOrgToken('operatorSession', orgId);
    const expiresAtMs = clock.nowMs() + ttlHours * 3_600_000;
    const item: StoredCredential & { entity: string } = {
      entity: 'operatorSession',
      kind: 'operatorSession',
      id: minted.credentialId,
      orgId,
      hash: minted.hash,
      operatorId,
      role,
      createdAt: clock.nowIso(),
      expiresAt: ttlSeconds(expiresAtMs),
    };
    await db.send(
      new PutCommand({ TableName: tableName, Item: { ...keys.operatorSession(orgId, item.id), ...item } }),
    );
    return { token: minted.token, expiresAt: new Date(expiresAtMs).toISOString() };
  },

  /**
   * An operator session minted for the platform admin acting as that operator (at most `ttlMs`),
   * written with its audit entry in one transaction.
   */
  async createImpersonationSession(
    orgId: string,
    operator: { id: string; role: OperatorRole },
    impersonatedBy: string,
    ttlMs: number,
    audit: OrgAuditEntry,
  ) {
    const minted = mintOrgToken('operatorSession', orgId);
    const expiresAtMs = clock.nowMs() + ttlMs;
    const item: StoredCredential & { entity: string } = {
      entity: 'operatorSession',
      kind: 'operatorSession',
      id: minted.credentialId,
      orgId,
      hash: minted.hash,
      operatorId: operator.id,
      role: operator.role,
      impersonatedBy,
      createdAt: clock.nowIso(),
      expiresAt: ttlSeconds(expiresAtMs),
    };
    await transact([
      {
        Put: {
          TableName: tableName,
          Item: { ...keys.operatorSession(orgId, item.id), ...item },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      orgAudit.write(orgId, {
        ...audit,
        details: { ...audit.details, sessionId: item.id, expiresAt: new Date(expiresAtMs).toISOString() },
      }),
    ]);
    return { token: minted.token, sessionId: item.id, expiresAt: new Date(expiresAtMs).toISOString() };
  },

  /**
   * Ends an impersonation session server-side (revoked: 401 from then on) and audits it, in one
   * transaction. False when there is no such live impersonation session with that token hash (a
   * forged, ended or ordinary session is left alone).
   */
  async endImpersonation(orgId: string, sessionId: string, hash: string, audit: OrgAuditEntry) {
    const failed = await transactUnlessConditionFails([
      {
        Update: {
          TableName: tableName,
          Key: keys.operatorSession(orgId, sessionId),
          ...updateExpression(
            { set: { revokedAt: clock.nowIso() } },
            {
              expression:
                'attribute_exists(pk) AND #hash = :hash AND attribute_exists(impersonatedBy) AND (attribute_not_exists(revokedAt) OR revokedAt = :null)',
              names: { '#hash': 'hash' },
              values: { ':hash': hash, ':null': null },
            },
          ),
        },
      },
      orgAudit.write(orgId, { ...audit, details: { ...audit.details, sessionId } }),
    ]);
    if (failed === 0) return false;
    if (failed !== undefined) throw new ConcurrentChangeError();
    return true;
  },

  /**
   * Whether a visitor token's visitor may still act: not merged into another, not erased (their
   * tokens stop working with the change), and still there. Read after the token, on a cache miss.
   */
  async visitorActive(orgId: string, visitorId: string): Promise<boolean> {
    const { Item } = await db.send(
      new GetCommand({
        TableName: tableName,
        Key: keys.visitor(orgId, visitorId),
        // Strongly consistent: a token must stop working as soon as the merge or erasure answered.
        ConsistentRead: true,
        ProjectionExpression: 'mergedInto, erasedAt',
      }),
    );
    return Item !== undefined && !Item.mergedInto && !Item.erasedAt;
  },

  /** The visitor token item, for writing in the same transaction as the visitor it belongs to. */
  visitorTokenItem(orgId: string, visitorId: string, ttlHours: number) {
    const minted = mintOrgToken('visitorToken', orgId);
    const expiresAtMs = clock.nowMs() + ttlHours * 3_600_000;
    const item: StoredCredential & { entity: string } = {
      entity: 'visitorToken',
      kind: 'visitorToken',
      id: minted.credentialId,
      orgId,
      hash: minted.hash,
      visitorId,
      createdAt: clock.nowIso(),
      expiresAt: ttlSeconds(expiresAtMs),
    };
    return {
      item: { ...keys.visitorToken(orgId, item.id), ...item },
      token: minted.token,
      expiresAt: new Date(expiresAtMs).toISOString(),
    };
  },
};
