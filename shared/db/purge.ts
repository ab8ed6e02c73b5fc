import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import { db, tableName } from './client';
import { keys } from './keys';

const PAGE = 100;
const PARALLEL = 25;

/**
 * Marks one page of a deleted conversation's messages deleted (content cleared, out of the unread
 * index), starting after `after`. Idempotent: a message already marked is left as it is, so a step
 * repeated after a crash changes nothing twice. Returns where the next step starts, or undefined
 * when the conversation has no more messages.
 */
export async function purgeMessagesStep(
  orgId: string,
  conversationId: string,
  after: string | undefined,
): Promise<{ marked: number; next: string | undefined }> {
  const pk = keys.conversationPartition(orgId, conversationId);
  const { Items = [], LastEvaluatedKey } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': pk, ':prefix': keys.messagePrefix },
      ProjectionExpression: 'pk, sk, deletedAt',
      Limit: PAGE,
      ...(after ? { ExclusiveStartKey: { pk, sk: after } } : {}),
    }),
  );
  const pending = Items.filter((item) => !item.deletedAt);
  const now = clock.nowIso();
  for (let i = 0; i < pending.length; i += PARALLEL) {
    await Promise.all(
      pending.slice(i, i + PARALLEL).map((item) =>
        db.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { pk: item.pk, sk: item.sk },
            UpdateExpression:
              'SET deletedAt = :now, content = :empty, searchVector = :empty REMOVE gsi1pk, gsi1sk',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':now': now, ':empty': '' },
          }),
        ),
      ),
    );
  }
  return { marked: pending.length, next: LastEvaluatedKey ? String(LastEvaluatedKey.sk) : undefined };
}
