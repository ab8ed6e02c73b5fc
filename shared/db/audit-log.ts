import { BatchGetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import { auditEventProjection } from '../schemas/projections';
import { db, tableName } from './client';
import { decodeCursor, encodeCursor } from './cursor';
import { keys } from './keys';
import type { AuditActor, AuditTarget } from './org-audit';
import { project } from './project';

/**
 * The audit log's read side (GET /api/audit-events), apart from `org-audit.ts`, which every function
 * that audits an action imports: those bundles then carry no cursor signing.
 */

export interface AuditEvent {
  id: string;
  type: string;
  at: string;
  actor: { type: AuditActor['type']; id: string; name: string | null };
  impersonatedBy: string | null;
  target: AuditTarget;
  details: Record<string, unknown>;
}

/** An entry as projected, before the defaults of what older entries lack. */
type AuditEntry = Omit<AuditEvent, 'details'> & { details: unknown };

export interface AuditFilters {
  type?: string | undefined;
  actorType?: string | undefined;
  actorId?: string | undefined;
  targetType?: string | undefined;
  targetId?: string | undefined;
  /** Inclusive. */
  since?: string | undefined;
  /** Exclusive. */
  until?: string | undefined;
}

/** The sort key prefix of the ids minted in millisecond `ms` (UUIDv7: 48 bits of milliseconds first). */
function idPrefixAt(ms: number): string {
  const hex = Math.max(0, ms).toString(16).padStart(12, '0');
  return `${keys.orgAuditPrefix}${hex.slice(0, 8)}-${hex.slice(8, 12)}`;
}

/**
 * Entries written before the audit log API (issue 27) name their type `action`, have no target and
 * keep their details beside it as attributes of the item; these are the ones each type's writer put
 * there. `impersonation.started` also kept the session's end as `expiresAt`, never answered: that is
 * the TTL's name.
 */
const LEGACY_DETAILS: Record<string, readonly string[]> = {
  'export.conversations': [
    'operation',
    'requestId',
    'format',
    'redactPii',
    'filters',
    'matched',
    'startedAt',
    'rows',
    'bytes',
    'completed',
    'error',
  ],
  'transcript.emailed': ['requestId', 'conversationId', 'to', 'messageCount', 'truncated'],
  'impersonation.started': ['impersonatedOperatorId', 'sessionId'],
  'impersonation.request': ['impersonatedOperatorId', 'sessionId', 'route', 'path', 'requestId'],
  'impersonation.stopped': ['sessionId'],
};

const toEntry = project<AuditEntry>(auditEventProjection);

/** The API shape of a stored entry; entries written before the audit log API (with `action`) too. */
function toAuditEvent(orgId: string | null, item: Record<string, unknown>): AuditEvent {
  const entry = toEntry(item);
  entry.actor ??= { type: 'system', id: 'system', name: null };
  entry.actor.name ??= null;
  if (typeof item.type === 'string') {
    entry.impersonatedBy ??= null;
    entry.details ??= {};
  } else {
    const legacy = LEGACY_DETAILS[String(item.action)] ?? [];
    entry.type = String(item.action);
    entry.impersonatedBy = null;
    entry.target = { type: 'organization', id: orgId ?? 'platform' };
    // In the order the item's attributes were read, as they were answered before.
    entry.details = Object.fromEntries(Object.entries(item).filter(([name]) => legacy.includes(name)));
  }
  return entry as AuditEvent;
}

const MAX_QUERIES = 10;

export const auditLog = {
  /**
   * A page of the log, newest first. `since`/`until` bound the sort key (ids are minted from the same
   * instant as `at`); the other filters are a FilterExpression, so a page reads until `limit + 1`
   * entries match or 10 Queries were sent, and may come back short with a cursor.
   */
  async list(
    orgId: string | null,
    filters: AuditFilters,
    page: { cursor?: string | undefined; limit: number },
  ): Promise<{ data: AuditEvent[]; nextCursor: string | null }> {
    const queryId = `audit:${JSON.stringify(filters)}`;
    const cursorOrg = orgId ?? 'platform';
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {
      ':pk': keys.orgAuditPartition(orgId),
      ':now': Math.floor(clock.nowMs() / 1000),
    };
    const conditions = ['(attribute_not_exists(expiresAt) OR expiresAt > :now)'];
    const equal = (path: string[], value: string | undefined, name: string) => {
      if (value === undefined) return;
      const attribute = path
        .map((part) => {
          names[`#${part}`] = part;
          return `#${part}`;
        })
        .join('.');
      values[`:${name}`] = value;
      conditions.push(`${attribute} = :${name}`);
    };
    if (filters.type !== undefined) {
      names['#type'] = 'type';
      names['#action'] = 'action';
      values[':type'] = filters.type;
      conditions.push('(#type = :type OR #action = :type)');
    }
    equal(['actor', 'type'], filters.actorType, 'actorType');
    equal(['actor', 'id'], filters.actorId, 'actorId');
    equal(['target', 'type'], filters.targetType, 'targetType');
    equal(['target', 'id'], filters.targetId, 'targetId');
    let keyCondition = 'pk = :pk AND begins_with(sk, :prefix)';
    values[':prefix'] = keys.orgAuditPrefix;
    if (filters.since !== undefined || filters.until !== undefined) {
      delete values[':prefix'];
      values[':from'] =
        filters.since !== undefined ? idPrefixAt(Date.parse(filters.since)) : keys.orgAuditPrefix;
      values[':to'] =
        filters.until !== undefined ? idPrefixAt(Date.parse(filters.until)) : `${keys.orgAuditPrefix}~`;
      // BETWEEN is inclusive; the `at` filter makes `until` exclusive to the millisecond.
      keyCondition = 'pk = :pk AND sk BETWEEN :from AND :to';
      names['#at'] = 'at';
      if (filters.since !== undefined) {
        values[':since'] = filters.since;
        conditions.push('#at >= :since');
      }
      if (filters.until !== undefined) {
        values[':until'] = filters.until;
        conditions.push('#at < :until');
      }
    }
    let startKey = page.cursor ? decodeCursor(page.cursor, cursorOrg, queryId) : undefined;
    const matched: Record<string, unknown>[] = [];
    let queries = 0;
    do {
      const result = await db.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: keyCondition,
          FilterExpression: conditions.join(' AND '),
          ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
          ExpressionAttributeValues: values,
          ScanIndexForward: false,
          Limit: Math.max(page.limit + 1 - matched.length, 25),
          ExclusiveStartKey: startKey,
        }),
      );
      queries += 1;
      for (const item of result.Items ?? []) {
        matched.push(item);
      }
      startKey = result.LastEvaluatedKey;
    } while (startKey && matched.length <= page.limit && queries < MAX_QUERIES);
    const taken = matched.slice(0, page.limit);
    const last = taken.at(-1);
    const nextCursor =
      matched.length > page.limit && last
        ? encodeCursor(cursorOrg, queryId, { pk: last.pk, sk: last.sk })
        : startKey
          ? encodeCursor(cursorOrg, queryId, startKey)
          : null;
    const data = taken.map((item) => toAuditEvent(orgId, item));
    await nameOperators(orgId, data);
    return { data, nextCursor };
  },
};

/** Operators are named as they are called now: one BatchGetItem for the page's unnamed operators. */
async function nameOperators(orgId: string | null, data: AuditEvent[]): Promise<void> {
  if (orgId === null) return;
  const ids = [
    ...new Set(
      data.filter((e) => e.actor.type === 'operator' && e.actor.name === null).map((e) => e.actor.id),
    ),
  ];
  if (ids.length === 0) return;
  const found = new Map<string, string>();
  for (let i = 0; i < ids.length; i += 100) {
    let request: Record<string, unknown>[] | undefined = ids
      .slice(i, i + 100)
      .map((id) => keys.operator(orgId, id));
    for (let attempt = 0; request?.length && attempt < 5; attempt += 1) {
      const result = await db.send(
        new BatchGetCommand({
          RequestItems: {
            [tableName]: {
              Keys: request,
              ProjectionExpression: 'id, #name',
              ExpressionAttributeNames: { '#name': 'name' },
            },
          },
        }),
      );
      for (const item of result.Responses?.[tableName] ?? []) found.set(String(item.id), String(item.name));
      request = result.UnprocessedKeys?.[tableName]?.Keys as Record<string, unknown>[] | undefined;
    }
  }
  for (const entry of data) {
    if (entry.actor.type === 'operator' && entry.actor.name === null)
      entry.actor.name = found.get(entry.actor.id) ?? null;
  }
}
