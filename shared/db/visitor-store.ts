import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../errors';
import { db, tableName } from './client';
import { keys } from './keys';
import type { TransactItem, Write } from './transaction';
import { type StoredVisitor, storedVisitorOf, visitorItem } from './visitor-record';

/*
 * The visitor item's reads and writes shared by the contacts endpoints, the merge and the erasure
 * (apart from contacts.ts, whose listing cursors need the signing key the workers are not given).
 */

/** The visitor's live conversations: its gsi4 entries (removed by a soft delete), counted. */
export async function conversationCountOf(orgId: string, visitorId: string): Promise<number> {
  const partition = keys.conversationListPartition.visitor(orgId, visitorId);
  let count = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: partition.index,
        KeyConditionExpression: 'gsi4pk = :pk',
        ExpressionAttributeValues: { ':pk': partition.pk },
        Select: 'COUNT',
        ExclusiveStartKey: startKey,
      }),
    );
    count += page.Count ?? 0;
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return count;
}

export async function getStored(orgId: string, visitorId: string): Promise<StoredVisitor | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: keys.visitor(orgId, visitorId), ConsistentRead: true }),
  );
  return Item ? storedVisitorOf(Item) : undefined;
}

const takenExternalId = () =>
  new ConflictError('Another visitor has this externalId', { field: 'externalId' });

/** The external-id guard changes a write makes: claim the new one, release the old one. */
export function guardWrites(orgId: string, before: StoredVisitor | undefined, after: StoredVisitor): Write[] {
  const writes: Write[] = [];
  if (before?.externalId === after.externalId) return writes;
  if (after.externalId !== null) {
    writes.push({
      action: {
        Put: {
          TableName: tableName,
          Item: {
            ...keys.visitorExternalId(orgId, after.externalId),
            entity: 'visitorExternalId',
            visitorId: after.id,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      onConditionFailed: takenExternalId,
    });
  }
  if (before?.externalId) {
    writes.push({
      action: {
        Delete: {
          TableName: tableName,
          Key: keys.visitorExternalId(orgId, before.externalId),
          ConditionExpression: 'visitorId = :me',
          ExpressionAttributeValues: { ':me': after.id },
        },
      },
    });
  }
  return writes;
}

/** The visitor's Put on the `rev` it was read at (absent: a new visitor). */
export function visitorPut(
  orgId: string,
  before: StoredVisitor | undefined,
  after: StoredVisitor,
): TransactItem {
  return {
    Put: {
      TableName: tableName,
      Item: visitorItem(orgId, after),
      ...(before === undefined
        ? { ConditionExpression: 'attribute_not_exists(pk)' }
        : before.rev === 0
          ? { ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(rev)' }
          : { ConditionExpression: 'rev = :rev', ExpressionAttributeValues: { ':rev': before.rev } }),
    },
  };
}
