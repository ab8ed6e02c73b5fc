import { isDeepStrictEqual } from 'node:util';
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import { visitorProjection } from '../schemas/projections';
import type { Visitor } from '../schemas/visitor';
import { storage } from '../storage';
import { batchDelete } from './batch';
import { db, tableName } from './client';
import { conversations, rewriteConversation, type StoredConversation } from './conversations';
import { indexed, untilIndexed } from './index-lag';
import { type Key, keys } from './keys';
import { project } from './project';
import { deleteFiles } from './purge';
import { childrenQuery } from './query';
import { objectKeys, uploads } from './uploads';
import { profileOf } from './visitor-record';
import { getStored } from './visitor-store';

const toVisitor = project<Visitor>(visitorProjection);

type Item = Record<string, unknown>;

/** Message keys per Query page; updates sent at once. */
const PAGE = 100;
const PARALLEL = 25;
/** Revision slots a message can hold (the ring of shared/db/messages.ts). */
const REVISION_SLOTS = 20;
const WRITE_ATTEMPTS = 8;

async function updateEach(items: readonly Item[], update: (item: Item) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += PARALLEL)
    await Promise.all(items.slice(i, i + PARALLEL).map(update));
}

/**
 * Blanks the visitor's messages of one page: their files deleted first (storage, then the upload
 * record), then the text, search text and attachments emptied and their edit history deleted. A
 * message already blank is skipped, so a repeated step writes nothing twice.
 */
async function blankMessages(orgId: string, items: Item[]): Promise<number> {
  const now = clock.nowIso();
  const theirs = items.filter(
    (item) =>
      item.senderType === 'visitor' &&
      (item.content !== '' || ((item.attachments as unknown[] | undefined) ?? []).length > 0),
  );
  await updateEach(theirs, async (item) => {
    await deleteFiles(orgId, (item.attachments as { id: string }[] | undefined) ?? []);
    if (Number(item.editCount ?? 0) > 0) {
      const [, conversationId] = String(item.pk).split('#CONV#');
      const messageId = String(item.sk).slice(keys.messagePrefix.length);
      await batchDelete(
        Array.from(
          { length: REVISION_SLOTS },
          (_, slot): Key => keys.revision(orgId, String(conversationId), messageId, slot),
        ),
      );
    }
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { pk: item.pk, sk: item.sk },
        UpdateExpression: 'SET content = :empty, searchVector = :empty, attachments = :none, erasedAt = :now',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':empty': '', ':none': [], ':now': now },
      }),
    );
  });
  return theirs.length;
}

/**
 * The conversation, anonymized: the embedded visitor is the erased one, the title (by default
 * the opening visitor message) and a preview of a visitor message are blank. An Update on `rev`
 * like every state write; a lost race reads again. Counts, ids and status stay.
 */
async function scrubConversation(orgId: string, conversationId: string, visitor: Visitor): Promise<number> {
  const written = await rewriteConversation(
    orgId,
    conversationId,
    (current) => scrubbed(current, visitor),
    WRITE_ATTEMPTS,
  );
  return written ? 1 : 0;
}

/** The conversation anonymized for the erased `visitor`; undefined when it is already (or not theirs). */
function scrubbed(current: StoredConversation, visitor: Visitor): StoredConversation | undefined {
  if (current.visitorId !== visitor.id) return undefined;
  const next = {
    ...current,
    visitor,
    title: '',
    lastMessage:
      current.lastMessage?.senderType === 'visitor'
        ? { ...current.lastMessage, content: '' }
        : current.lastMessage,
  };
  // Maps read back in any key order: compared by value.
  return isDeepStrictEqual(next, current) ? undefined : next;
}

/** The erased visitor as conversations embed it once anonymized; undefined when not found. */
async function erasedSnapshot(orgId: string, visitorId: string): Promise<Visitor | undefined> {
  const visitor = await getStored(orgId, visitorId);
  return visitor ? toVisitor(profileOf(visitor, 0)) : undefined;
}

/**
 * Whether the last pass can pass over a conversation: deleted (the purge blanks those), or
 * anonymized already. The first pass anonymizes a conversation only after reading all of its
 * messages strongly, after the erasure committed, so its messages of before the erasure are blank.
 */
async function alreadyErased(orgId: string, visitorId: string, conversationId: string): Promise<boolean> {
  const [conversation, visitor] = await Promise.all([
    conversations.get(orgId, conversationId),
    erasedSnapshot(orgId, visitorId),
  ]);
  return !conversation || (visitor !== undefined && scrubbed(conversation, visitor) === undefined);
}

/** The next conversation of the visitor after `afterId` (its listing is in creation order). */
async function nextConversation(orgId: string, visitorId: string, afterId: string | undefined) {
  const partition = keys.conversationListPartition.visitor(orgId, visitorId);
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: partition.index,
      KeyConditionExpression: afterId ? 'gsi4pk = :pk AND gsi4sk > :after' : 'gsi4pk = :pk',
      ExpressionAttributeValues: { ':pk': partition.pk, ...(afterId ? { ':after': afterId } : {}) },
      ProjectionExpression: 'gsi4sk',
      Limit: 1,
    }),
  );
  const next = Items[0]?.gsi4sk;
  return next === undefined ? undefined : String(next);
}

/** Deletes a page of the visitor's own uploads (attached or not): the object, then the record. */
async function deleteUploads(orgId: string, visitorId: string, after: string | undefined) {
  const partition = keys.visitorUploadsPartition(orgId, visitorId);
  const { Items = [], LastEvaluatedKey } = await db.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: partition.index,
      KeyConditionExpression: after ? 'gsi1pk = :pk AND gsi1sk > :after' : 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': partition.pk, ...(after ? { ':after': after } : {}) },
      Limit: PAGE,
    }),
  );
  const ids = Items.map((item) => String(item.gsi1sk));
  await Promise.all(
    ids.map(async (uploadId) => {
      // Wherever its bytes are: still pending, or checked.
      await storage.remove('uploads', objectKeys.pending(orgId, uploadId));
      await storage.remove('uploads', objectKeys.file(orgId, uploadId));
      await uploads.remove(orgId, uploadId);
    }),
  );
  return { deleted: ids.length, last: LastEvaluatedKey ? ids.at(-1) : undefined };
}

/**
 * Where an erasure stands (the job's `after`): `CONV#<c>#` (the messages of conversation c from
 * the start) or `CONV#<c>#<message sk>` (after that message), `NEXT#<c>` (c is done: the next
 * conversation), `UPLOADS#` or `UPLOADS#<u>` (the visitor's uploads after u); undefined at the
 * start (the first conversation).
 */
const CONV = 'CONV#';
const NEXT = 'NEXT#';
const UPLOADS = 'UPLOADS#';
/**
 * The last pass: `AGAIN#` followed by a cursor of the above (`AGAIN#` alone: its start). The first
 * pass finds the visitor's conversations and uploads through indexes, which may not show the
 * newest writes yet (a conversation started, a file uploaded a moment before the erasure); the
 * last one walks them again once the indexes show everything written before the erasure
 * (INDEX_LAG_MS after `erasedAt`), so the erasure reaches everything that existed when it was asked.
 */
const AGAIN = 'AGAIN#';

/** When the visitor was erased (epoch ms); undefined when it is missing or not erased. */
async function erasedAtMs(orgId: string, visitorId: string): Promise<number | undefined> {
  const erasedAt = (await getStored(orgId, visitorId))?.erasedAt;
  return erasedAt ? Date.parse(erasedAt) : undefined;
}

type Step = { changed: number; next: string | undefined };

/** A step of the last pass, its next cursor marked as such. */
const again = (step: Step): Step => ({
  changed: step.changed,
  next: step.next === undefined ? undefined : `${AGAIN}${step.next}`,
});

/**
 * One step of a pass from `after` (a cursor without `AGAIN#`). In the last pass (`last`), a
 * conversation the first pass anonymized is passed over with one read of it instead of its
 * messages being read again.
 */
async function passStep(
  orgId: string,
  visitorId: string,
  after: string | undefined,
  last: boolean,
): Promise<Step> {
  if (after === undefined || after.startsWith(NEXT)) {
    const next = await nextConversation(orgId, visitorId, after?.slice(NEXT.length));
    if (!next) return { changed: 0, next: UPLOADS };
    if (last && (await alreadyErased(orgId, visitorId, next))) return { changed: 0, next: `${NEXT}${next}` };
    return { changed: 0, next: `${CONV}${next}#` };
  }
  if (after.startsWith(CONV)) {
    const rest = after.slice(CONV.length);
    const cut = rest.indexOf('#');
    const conversationId = rest.slice(0, cut);
    const messageSk = rest.slice(cut + 1);
    const pk = keys.conversationPartition(orgId, conversationId);
    const { Items = [], LastEvaluatedKey } = await db.send(
      new QueryCommand({
        ...childrenQuery(pk, keys.messagePrefix),
        ProjectionExpression: 'pk, sk, senderType, content, attachments, editCount',
        ConsistentRead: true,
        Limit: PAGE,
        ...(messageSk ? { ExclusiveStartKey: { pk, sk: messageSk } } : {}),
      }),
    );
    let changed = await blankMessages(orgId, Items);
    if (LastEvaluatedKey) return { changed, next: `${CONV}${conversationId}#${String(LastEvaluatedKey.sk)}` };
    const visitor = await erasedSnapshot(orgId, visitorId);
    if (visitor) changed += await scrubConversation(orgId, conversationId, visitor);
    return { changed, next: `${NEXT}${conversationId}` };
  }
  if (after.startsWith(UPLOADS)) {
    const { deleted, last: lastUpload } = await deleteUploads(
      orgId,
      visitorId,
      after.slice(UPLOADS.length) || undefined,
    );
    return { changed: deleted, next: lastUpload ? `${UPLOADS}${lastUpload}` : undefined };
  }
  throw new Error(`Not an erasure cursor: ${after}`);
}

export const visitorErasure = {
  /**
   * One step of an erasure, from `after` (see above): a page of ≤ 100 messages of one of the
   * visitor's conversations (its visitor messages blanked), or that conversation's own item
   * anonymized, or a page of the visitor's uploads deleted. Returns where the next step starts, or
   * undefined when the erasure is complete. Two passes (see AGAIN): the step that starts the last
   * one waits until INDEX_LAG_MS after `erasedAt` (at most that long; a job that starts later than
   * that makes its single pass the last one). Every step is idempotent (blank messages are skipped,
   * an anonymized conversation is not written again, deleting a deleted upload changes nothing), so
   * a step repeated after a crash, or a whole erasure run twice, changes nothing twice.
   */
  async eraseStep(orgId: string, visitorId: string, after: string | undefined): Promise<Step> {
    if (after?.startsWith(AGAIN)) {
      const rest = after.slice(AGAIN.length);
      if (rest === '') {
        const erasedAt = await erasedAtMs(orgId, visitorId);
        if (erasedAt !== undefined) await untilIndexed(erasedAt);
      }
      return again(await passStep(orgId, visitorId, rest || undefined, true));
    }
    if (after === undefined) {
      const erasedAt = await erasedAtMs(orgId, visitorId);
      // The indexes already show all that existed at the erasure: one pass finds everything.
      if (erasedAt === undefined || indexed(erasedAt))
        return again(await passStep(orgId, visitorId, undefined, true));
    }
    const step = await passStep(orgId, visitorId, after, false);
    return { changed: step.changed, next: step.next ?? AGAIN };
  },
};
