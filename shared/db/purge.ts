import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import type { StoredConversation } from '../conversations/state';
import { storage } from '../storage';
import { batchDelete } from './batch';
import { db, tableName } from './client';
import { conversationStateWrite, storedConversationOf } from './conversation-item';
import { type Key, keys } from './keys';
import { childrenQuery } from './query';
import { objectKeys, uploads } from './uploads';

type Item = Record<string, unknown>;

/** Keys per Query page; updates sent at once. */
const PAGE = 100;
const PARALLEL = 25;

/** Runs `update` on every item, 25 requests in flight at a time. */
async function updateEach(items: readonly Item[], update: (item: Item) => Promise<unknown>): Promise<number> {
  for (let i = 0; i < items.length; i += PARALLEL)
    await Promise.all(items.slice(i, i + PARALLEL).map(update));
  return items.length;
}

/**
 * Marks messages deleted (content cleared, out of the unread index, no attachments); already marked
 * ones are skipped. Their files go first, from storage and then their upload records: a crash in
 * between leaves the message unmarked, and the next attempt deletes what is left.
 */
function markMessages(items: Item[]): Promise<number> {
  const now = clock.nowIso();
  return updateEach(
    items.filter((item) => !item.deletedAt),
    async (item) => {
      await deleteFiles(String(item.orgId), (item.attachments as { id: string }[] | undefined) ?? []);
      return db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { pk: item.pk, sk: item.sk },
          UpdateExpression:
            'SET deletedAt = :now, content = :empty, searchVector = :empty, attachments = :none REMOVE gsi1pk, gsi1sk',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':now': now, ':empty': '', ':none': [] },
        }),
      );
    },
  );
}

/** A deleted message's files: the stored objects, then their records (404 from then on). */
export async function deleteFiles(orgId: string, files: readonly { id: string }[]): Promise<void> {
  await Promise.all(
    files.map(async (file) => {
      await storage.remove('uploads', objectKeys.file(orgId, file.id));
      await uploads.remove(orgId, file.id);
    }),
  );
}

/** Deletes the items (revisions, notes); deleting a missing item is a no-op. */
async function deleteAll(items: Item[]): Promise<number> {
  await batchDelete(items.map((item): Key => ({ pk: String(item.pk), sk: String(item.sk) })));
  return items.length;
}

/** Clears the free-text reason of snooze audit entries; the entries themselves stay. */
function clearSnoozeReasons(items: Item[]): Promise<number> {
  return updateEach(
    items.filter((item) => item.reason !== undefined && item.reason !== null),
    (item) =>
      db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { pk: item.pk, sk: item.sk },
          UpdateExpression: 'SET reason = :null',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':null': null },
        }),
      ),
  );
}

/** Clears the free-text comment of survey responses; score and state stay (already out of CSAT). */
function clearSurveyComments(items: Item[]): Promise<number> {
  return updateEach(items, (item) =>
    db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { pk: item.pk, sk: item.sk },
        // `comment` is a DynamoDB reserved word: named, so the phase projects keys only.
        UpdateExpression: 'SET #comment = :null',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#comment': 'comment' },
        ExpressionAttributeValues: { ':null': null },
      }),
    ),
  );
}

/**
 * The items of a conversation's partition that hold its text, one sort-key prefix each, in the
 * order the purge visits them. What is not listed here keeps no text: assignment, note-deletion and
 * deletion audit entries hold ids only.
 */
const phases: readonly { prefix: string; projection: string; apply: (items: Item[]) => Promise<number> }[] = [
  { prefix: keys.messagePrefix, projection: 'pk, sk, deletedAt, orgId, attachments', apply: markMessages },
  { prefix: keys.revisionsPrefix, projection: 'pk, sk', apply: deleteAll },
  { prefix: keys.notePrefix, projection: 'pk, sk', apply: deleteAll },
  { prefix: keys.conversationAuditPrefix('SNOOZE'), projection: 'pk, sk, reason', apply: clearSnoozeReasons },
  { prefix: keys.surveyPrefix, projection: 'pk, sk', apply: clearSurveyComments },
];

/** The soft-deleted conversation without its texts (title, preview, AI summary, follow-up note). */
function withoutText(conversation: StoredConversation): StoredConversation {
  const { metadata } = conversation;
  return {
    ...conversation,
    title: '',
    lastMessage: conversation.lastMessage && { ...conversation.lastMessage, content: '' },
    aiSummary: null,
    metadata: metadata.followUpNote == null ? metadata : { ...metadata, followUpNote: null },
  };
}

/**
 * The last step: the conversation item keeps its counts, ids and `deletedAt` but loses its texts.
 * Written like every state write of a conversation, an Update on `rev` (nothing else writes a deleted
 * conversation, so it does not race). A live conversation is left alone.
 */
async function clearConversationText(orgId: string, conversationId: string): Promise<number> {
  const { Item } = await db.send(
    new GetCommand({
      TableName: tableName,
      Key: keys.conversation(orgId, conversationId),
      ConsistentRead: true,
    }),
  );
  if (!Item?.deletedAt) return 0;
  const current = storedConversationOf(Item);
  const next = withoutText(current);
  if (JSON.stringify(next) === JSON.stringify(current)) return 0;
  const { Update } = conversationStateWrite(current, next).action;
  if (Update) await db.send(new UpdateCommand(Update));
  return 1;
}

/**
 * One step of the purge of a deleted conversation, starting after the sort key `after` (none: the
 * beginning). In turn: messages are marked deleted (content cleared, out of the unread index),
 * revisions and notes deleted, snooze reasons and survey comments cleared, a page of at most 100 keys per step, one
 * Query by sort-key prefix each; the conversation item loses its texts last. Returns where the next
 * step starts: the last key handled, the next prefix when a kind is done, `CONVERSATION` for the
 * last step, or undefined when the purge is complete. Every step is idempotent (marked messages and
 * cleared reasons are skipped, deleting a deleted item changes nothing), so a step repeated after a
 * crash, or a whole purge run twice, changes nothing twice.
 */
export async function purgeStep(
  orgId: string,
  conversationId: string,
  after: string | undefined,
): Promise<{ changed: number; next: string | undefined }> {
  const last = keys.conversation(orgId, conversationId).sk;
  if (after === last) return { changed: await clearConversationText(orgId, conversationId), next: undefined };
  const index = after === undefined ? 0 : phases.findIndex((phase) => after.startsWith(phase.prefix));
  const phase = phases[index];
  if (!phase) throw new Error(`Not a purge cursor: ${after}`);
  const pk = keys.conversationPartition(orgId, conversationId);
  const { Items = [], LastEvaluatedKey } = await db.send(
    new QueryCommand({
      ...childrenQuery(pk, phase.prefix),
      ProjectionExpression: phase.projection,
      // Strongly consistent: a child written just before the deletion must not be missed for good.
      ConsistentRead: true,
      Limit: PAGE,
      ...(after && after !== phase.prefix ? { ExclusiveStartKey: { pk, sk: after } } : {}),
    }),
  );
  const changed = await phase.apply(Items);
  const next = LastEvaluatedKey ? String(LastEvaluatedKey.sk) : (phases[index + 1]?.prefix ?? last);
  return { changed, next };
}
