import { decodeCursor, encodeCursor } from './cursor';
import { keys } from './keys';
import { toMessage } from './messages';
import { childrenQuery, queryPage } from './query';

/**
 * A page of messages ends before 4 MB of them, its cursor set: a Lambda answers at most 6 MB, which
 * a hundred messages of 10,000 three-byte characters (their search text as long again) and their
 * attachments' download URLs could pass.
 */
const MAX_PAGE_BYTES = 4_000_000;

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
  // Messages run to tens of KB: a page of them may take several 1 MB responses.
  const { items, more } = await queryPage(
    {
      ...childrenQuery(keys.conversationPartition(orgId, conversationId), keys.messagePrefix),
      ScanIndexForward: false,
    },
    page.cursor ? decodeCursor(page.cursor, orgId, queryId) : undefined,
    page.limit,
    { maxBytes: MAX_PAGE_BYTES },
  );
  const last = items.at(-1);
  const nextCursor = more && last ? encodeCursor(orgId, queryId, { pk: last.pk, sk: last.sk }) : null;
  return { data: items.map(toMessage), nextCursor };
}
