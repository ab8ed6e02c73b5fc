import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { inject } from 'vitest';
import { messageItem, newMessage } from '../../shared/db/messages';

/** The test stack's table through a DocumentClient of the test's own. */
export const tableClient = () =>
  DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: inject('endpoints').dynamodb,
      region: process.env.AWS_REGION ?? 'us-east-1',
    }),
  );

/**
 * Writes `count` visitor messages of a conversation straight into the table, 25 a BatchWriteItem and
 * 8 of those at once, as the data layer stores them (`message 1`…, a millisecond apart from a second
 * ahead): a conversation long enough for what a test reads page by page, in a fraction of the time
 * the same posts through the API take. The conversation's own counts are not moved.
 */
export async function seedMessages(
  orgId: string,
  conversationId: string,
  senderId: string,
  count: number,
): Promise<void> {
  const client = tableClient();
  const start = Date.now() + 1000;
  const items = Array.from({ length: count }, (_, i) =>
    messageItem(
      newMessage({
        orgId,
        conversationId,
        senderType: 'visitor',
        senderId,
        content: `message ${i + 1}`,
        now: new Date(start + i).toISOString(),
      }),
    ),
  );
  const batches: (typeof items)[] = [];
  for (let i = 0; i < items.length; i += 25) batches.push(items.slice(i, i + 25));
  for (let i = 0; i < batches.length; i += 8)
    await Promise.all(
      batches.slice(i, i + 8).map((batch) =>
        client.send(
          new BatchWriteCommand({
            RequestItems: { [inject('tableName')]: batch.map((Item) => ({ PutRequest: { Item } })) },
          }),
        ),
      ),
    );
}
