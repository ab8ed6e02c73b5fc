import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import { db, tableName } from './client';
import { isConditionFailure } from './errors';
import type { Key } from './keys';

/**
 * Sets the given fields (undefined ones are left alone) and `updatedAt` on an item that must exist:
 * the item after the change, or undefined when there is none. One UpdateItem.
 */
export async function updateExisting(
  key: Key,
  changes: object,
): Promise<Record<string, unknown> | undefined> {
  const fields = Object.entries({ ...changes, updatedAt: clock.nowIso() }).filter(
    ([, value]) => value !== undefined,
  );
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: key,
        UpdateExpression: `SET ${fields.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
        ExpressionAttributeNames: Object.fromEntries(fields.map(([name], i) => [`#f${i}`, name])),
        ExpressionAttributeValues: Object.fromEntries(fields.map(([, value], i) => [`:v${i}`, value])),
        ConditionExpression: 'attribute_exists(pk)',
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Attributes;
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}
