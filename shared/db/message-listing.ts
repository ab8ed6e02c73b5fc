import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db } from './client';
import { decodeCursor, encodeCursor } from './cursor';
import { keys } from './keys';
import { toMessage } from './messages';
import { childrenQuery } from './query';

/**
 * A page of a conversation's messages, newest first; the cursor is bound to the organization and
 * the conversation. In a module of its own: the cursor needs the key ring, read from Secrets
 * Manager at init (shared/cursor-keys.ts), which only the function listing messages should load.
 */
export async function listMessages(
  orgId: string,
  conversationId: string,
  page: { cursor?: string | undefined; limit: number },
) {
  const queryId = `messages:${conversationId}`;
  const { Items = [] } = await db.send(
    new QueryCommand({
      ...childrenQuery(keys.conversationPartition(orgId, conversationId), keys.messagePrefix),
      ScanIndexForward: false,
      Limit: page.limit + 1,
      ExclusiveStartKey: page.cursor ? decodeCursor(page.cursor, orgId, queryId) : undefined,
    }),
  );
  const data = Items.slice(0, page.limit).map(toMessage);
  const last = Items[page.limit - 1];
  const nextCursor =
    Items.length > page.limit && last ? encodeCursor(orgId, queryId, { pk: last.pk, sk: last.sk }) : null;
  return { data, nextCursor };
}
