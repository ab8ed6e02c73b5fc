import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { OperatorRole } from '../auth/caller';
import { clock } from '../clock';
import { uuidv7, uuidv7Ms } from '../ids';
import type { Operator } from '../schemas/organization';
import { operatorProjection } from '../schemas/projections';
import { batchGet } from './batch';
import { db, tableName } from './client';
import { INDEX_LAG_MS } from './index-lag';
import { keys } from './keys';
import { type AuditBy, orgAudit, systemActor } from './org-audit';
import { organizations } from './organizations';
import { project } from './project';
import { queryPrefix } from './query';
import { ConcurrentChangeError, transactUnlessConditionFails } from './transaction';

export type { Operator };

const toOperator = project<Operator>(operatorProjection);

/** Between lookups of an operator id the index may not show yet (see `organizationOf`). */
const LOOKUP_RETRY_MS = 100;

/** One Query of the operator's gsi1 entry (KEYS_ONLY: its `pk` is `ORG#<orgId>`). */
async function organizationOfEntry(operatorId: string): Promise<string | undefined> {
  const partition = keys.operatorLookupPartition(operatorId);
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: partition.index,
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': partition.pk },
      Limit: 1,
    }),
  );
  const pk = Items[0]?.pk;
  return typeof pk === 'string' ? keys.organizationOfPartition(pk) : undefined;
}

export type CreateOperatorResult =
  | { ok: true; operator: Operator }
  | { ok: false; reason: 'organization_missing' | 'email_taken' };

export const operators = {
  /** Creates the operator and claims its e-mail within the organization, atomically. */
  async create(
    orgId: string,
    input: { name: string; email: string; role: OperatorRole },
    by: AuditBy = systemActor,
  ): Promise<CreateOperatorResult> {
    const operator: Operator = { id: uuidv7(), orgId, ...input, createdAt: clock.nowIso() };
    // Read, not checked on the organization's item in the transaction (every credential and
    // operator write of the tenant would queue on it); organizations are never deleted.
    if (!(await organizations.get(orgId, { consistent: true })))
      return { ok: false, reason: 'organization_missing' };
    const failed = await transactUnlessConditionFails([
      {
        Put: {
          TableName: tableName,
          Item: {
            ...keys.operatorEmail(orgId, input.email),
            entity: 'operatorEmail',
            operatorId: operator.id,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Put: {
          TableName: tableName,
          Item: {
            ...keys.operator(orgId, operator.id),
            // Finds the operator's organization from its id alone (impersonation).
            ...keys.operatorLookup(operator.id),
            entity: 'operator',
            ...operator,
          },
        },
      },
      orgAudit.write(orgId, {
        ...by,
        type: 'operator.created',
        target: { type: 'operator', id: operator.id },
        details: { name: operator.name, email: operator.email, role: operator.role },
      }),
    ]);
    if (failed === 0) return { ok: false, reason: 'email_taken' };
    if (failed !== undefined) throw new ConcurrentChangeError();
    return { ok: true, operator };
  },

  /**
   * Every operator of the organization, in creation order: one Query of the organization's
   * partition per 1 MB page (`OPERATOR#` skips the e-mail guards), strongly consistent.
   */
  async all(orgId: string): Promise<Operator[]> {
    const items = await queryPrefix(keys.organization(orgId).pk, keys.operatorPrefix, { consistent: true });
    return items.map(toOperator);
  },

  /**
   * The organization of an operator id, through its gsi1 entry: the only record keyed by the id
   * alone (the operator item lives in its organization's partition, and an impersonation names
   * nothing but the id). An index cannot be read strongly and shows a new entry a moment late, so a
   * miss is final only once it shows every write from the id's own creation: an operator id minted
   * less than INDEX_LAG_MS ago (a UUIDv7 tells its millisecond) is looked up again every
   * LOOKUP_RETRY_MS until then. An older id (nearly every call) costs one Query, as before; an
   * operator created a moment ago a few more, never past INDEX_LAG_MS from now. The caller then
   * reads the operator itself by its key, strongly (`get`). Undefined for any other id.
   */
  async organizationOf(operatorId: string): Promise<string | undefined> {
    // The id's creation on this machine's wall clock, as `create` minted it (not the service clock).
    const mintedAt = uuidv7Ms(operatorId);
    const waitMs = mintedAt === undefined ? 0 : Math.min(INDEX_LAG_MS, mintedAt + INDEX_LAG_MS - Date.now());
    const until = Date.now() + waitMs;
    for (;;) {
      const orgId = await organizationOfEntry(operatorId);
      if (orgId !== undefined || Date.now() >= until) return orgId;
      await new Promise((resolve) => setTimeout(resolve, LOOKUP_RETRY_MS));
    }
  },

  /** Strongly consistent: an operator answers by id at once after its creation (a session, a note). */
  async get(orgId: string, operatorId: string): Promise<Operator | undefined> {
    const { Item } = await db.send(
      new GetCommand({ TableName: tableName, Key: keys.operator(orgId, operatorId), ConsistentRead: true }),
    );
    return Item ? toOperator(Item) : undefined;
  },

  /**
   * The ids of `operatorIds` that are no operator of the organization: one strongly consistent
   * BatchGetItem of their keys. Operators are never deleted, so what this finds still exists when
   * the caller writes: no condition on the operator's item in the caller's transaction, where every
   * message of one bot operator would otherwise queue on that one item.
   */
  async missing(orgId: string, operatorIds: readonly string[]): Promise<Set<string>> {
    const wanted = [...new Set(operatorIds)];
    if (wanted.length === 0) return new Set();
    const found = await batchGet(
      wanted.map((id) => keys.operator(orgId, id)),
      { consistent: true, projection: ['id'] },
    );
    const present = new Set(found.map((item) => String(item.id)));
    return new Set(wanted.filter((id) => !present.has(id)));
  },
};
