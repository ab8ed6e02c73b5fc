import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import { db, tableName } from './client';
import { isConditionFailure } from './errors';
import type { Key } from './keys';
import {
  ConcurrentChangeError,
  retryTransient,
  type TransactItem,
  transactUnlessConditionFails,
} from './transaction';
import { updateExpression } from './update-expression';

/**
 * Sets the given fields (undefined ones are left alone) and `updatedAt` on an item that must exist:
 * the item after the change, or undefined when there is none. One UpdateItem.
 */
export async function updateExisting(
  key: Key,
  changes: object,
  alongside: readonly TransactItem[] = [],
): Promise<Record<string, unknown> | undefined> {
  const fields = { ...changes, updatedAt: clock.nowIso() };
  if (alongside.length > 0) return updateWith(key, fields, alongside);
  try {
    const { Attributes } = await retryTransient(() =>
      db.send(new UpdateCommand({ ...setOnExisting(key, fields), ReturnValues: 'ALL_NEW' })),
    );
    return Attributes;
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/**
 * The same change in one transaction with other writes (an audit entry): a transaction returns no
 * item, so the item is read back, strongly consistent (a second round trip).
 */
async function updateWith(
  key: Key,
  fields: Readonly<Record<string, unknown>>,
  alongside: readonly TransactItem[],
): Promise<Record<string, unknown> | undefined> {
  const failed = await transactUnlessConditionFails([{ Update: setOnExisting(key, fields) }, ...alongside]);
  if (failed === 0) return undefined;
  if (failed !== undefined) throw new ConcurrentChangeError();
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
  return Item;
}

/** The Update that sets `fields` (undefined ones left alone) on the item at `key`, which must exist. */
function setOnExisting(key: Key, fields: Readonly<Record<string, unknown>>) {
  return {
    TableName: tableName,
    Key: key,
    ...updateExpression({ set: fields }, { expression: 'attribute_exists(pk)' }),
  };
}
