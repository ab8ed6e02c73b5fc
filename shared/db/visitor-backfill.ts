import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import { keys } from './keys';
import { storedVisitorOf } from './visitor-record';

export interface BackfillProgress {
  scanned: number;
  updated: number;
}

/**
 * A one-off for visitors written before issue 27 (widget bootstrap only): they have no listing or
 * sync keys (gsi1–gsi4) until their next write, so `GET /api/visitors` and its `updatedSince` sync
 * miss them. Nothing lists them by key (that is what is missing), so this is the table's one Scan:
 * visitor items without the sync key (`gsi2pk`), keys only, page by page; each gets the keys its
 * state implies (`keys.visitorIndexes`) and `updatedAt` = its `lastSeenAt` when absent, on the
 * condition that it still has no sync key (a write meanwhile wrote them: skipped). Idempotent and
 * resumable: run it again, and only what is left is written.
 */
export async function backfillVisitorKeys(
  onPage: (progress: BackfillProgress) => void = () => undefined,
): Promise<BackfillProgress> {
  const progress: BackfillProgress = { scanned: 0, updated: 0 };
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: 'entity = :visitor AND attribute_not_exists(gsi2pk)',
        ExpressionAttributeValues: { ':visitor': 'visitor' },
        ExclusiveStartKey: startKey,
      }),
    );
    progress.scanned += page.ScannedCount ?? 0;
    for (const item of page.Items ?? []) {
      const owner = keys.parseVisitorPartition(String(item.pk));
      if (!owner) continue;
      const visitor = storedVisitorOf(item);
      const indexes: Record<string, string> = keys.visitorIndexes({ orgId: owner.orgId, ...visitor });
      const names: Record<string, string> = { '#updatedAt': 'updatedAt' };
      const values: Record<string, unknown> = { ':updatedAt': visitor.updatedAt };
      const sets = ['#updatedAt = if_not_exists(#updatedAt, :updatedAt)'];
      for (const [name, value] of Object.entries(indexes)) {
        names[`#${name}`] = name;
        values[`:${name}`] = value;
        sets.push(`#${name} = :${name}`);
      }
      try {
        await db.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { pk: item.pk, sk: item.sk },
            UpdateExpression: `SET ${sets.join(', ')}`,
            ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(gsi2pk)',
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          }),
        );
        progress.updated++;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    }
    onPage({ ...progress });
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return progress;
}
