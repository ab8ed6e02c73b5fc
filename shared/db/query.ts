import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';

/**
 * Every item of one partition whose sort key starts with `prefix`, following pages until done or
 * until `limit` items: the read behind each "list the children of X" in this table.
 */
export async function queryPrefix(
  pk: string,
  prefix: string,
  options: { limit?: number; newestFirst?: boolean; consistent?: boolean } = {},
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix },
        ScanIndexForward: !options.newestFirst,
        ConsistentRead: options.consistent ?? false,
        ...(options.limit ? { Limit: options.limit - items.length } : {}),
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey && (options.limit === undefined || items.length < options.limit));
  return items;
}
