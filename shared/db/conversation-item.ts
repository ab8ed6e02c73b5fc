import type { StoredConversation } from '../conversations/state';
import { NotFoundError } from '../errors';
import type { Conversation } from '../schemas/conversation';
import { conversationProjection } from '../schemas/projections';
import { tableName } from './client';
import { keys } from './keys';
import { project, projectState } from './project';
import type { Write } from './transaction';
import { updateExpression } from './update-expression';

/**
 * The conversation as one table item: how the stored state is read from it, how it is written back
 * (`conversationStateWrite`, every change but a message post), and the conditions other writers of
 * the conversation's partition put on it.
 */

export const toConversation: (item: object) => Conversation = project<Conversation>(conversationProjection);

/** Every field of the stored state: the resource's, then the service's own. */
const projectStored = projectState<StoredConversation>(conversationProjection, [
  'rev',
  'firstVisitorMessageAt',
  'locale',
  'activeSurvey',
]);

export function storedConversationOf(item: Record<string, unknown>): StoredConversation {
  const stored = projectStored(item);
  stored.rev ??= 1;
  stored.firstVisitorMessageAt ??= null;
  stored.deletedAt ??= null;
  stored.locale ??= null;
  stored.activeSurvey ??= null;
  return stored;
}

/** The stored item: every listing key follows from the state, and a deleted conversation has none. */
export function conversationItem(conversation: StoredConversation) {
  const orgId = conversation.organizationId;
  const { firstVisitorMessageAt, ...state } = conversation;
  return {
    ...keys.conversation(orgId, conversation.id),
    ...(conversation.deletedAt ? {} : keys.conversationIndexes({ orgId, ...conversation })),
    // Incremental sync: kept when deleted, so a sync sees the deletion.
    ...keys.conversationUpdated(orgId, conversation.updatedAt, conversation.id),
    entity: 'conversation',
    ...state,
    // Absent until the first visitor message, which sets it with `if_not_exists` (see conversation-append.ts).
    ...(firstVisitorMessageAt === null ? {} : { firstVisitorMessageAt }),
  };
}

/** A condition on an attribute that older items store as an explicit null and newer ones leave out. */
export const nullOrAbsent = (name: string) => `(attribute_not_exists(${name}) OR ${name} = :null)`;

/** The item exists and is not soft-deleted (with `:null` bound to null). */
export const LIVE_CONDITION = `attribute_exists(pk) AND ${nullOrAbsent('deletedAt')}`;

/**
 * A transaction action that holds only while the conversation exists and is not soft-deleted: writes
 * to its children (notes, edits) cannot commit beside a concurrent deletion.
 */
export function conversationLive(orgId: string, conversationId: string): Write {
  return {
    action: {
      ConditionCheck: {
        TableName: tableName,
        Key: keys.conversation(orgId, conversationId),
        ConditionExpression: LIVE_CONDITION,
        ExpressionAttributeValues: { ':null': null },
      },
    },
    onConditionFailed: () => new NotFoundError('Conversation not found'),
  };
}

/**
 * Fields a message post moves without reading them first and without `rev` (see
 * conversation-append.ts): appends commute, so concurrent posts never race each other. A state
 * write that changes one of them (or a listing key derived from the last message's time) must also
 * be sure no post came in between: it is conditioned on `messageCount`, which every post's
 * transaction moves, and on `lastMessageAt`, which its second step moves.
 */
const APPEND_FIELDS: ReadonlySet<string> = new Set([
  'messageCount',
  'unreadCount',
  'hasUnreadMessages',
  'lastMessage',
  'lastMessageAt',
  'firstVisitorMessageAt',
  'firstResponseTimeMs',
  'gsi2sk',
  'gsi3sk',
]);

const sameValue = (a: unknown, b: unknown) =>
  a === b || (typeof a === 'object' && a !== null && JSON.stringify(a) === JSON.stringify(b));

/**
 * A state change of the conversation (anything but a message post) as one Update: only the
 * attributes that differ are written, on the `rev` that was read (and on `messageCount` and
 * `lastMessageAt` when it sets an append-moved field), so the counts and last message that posts
 * moved meanwhile are never overwritten with what this writer read.
 */
export function conversationStateWrite(current: StoredConversation, next: StoredConversation): Write {
  const before: Record<string, unknown> = conversationItem(current);
  const after: Record<string, unknown> = conversationItem({ ...next, rev: current.rev + 1 });
  const set = Object.entries(after).filter(
    ([name, value]) => value !== undefined && !sameValue(before[name], value),
  );
  const remove = Object.keys(before).filter(
    (name) => before[name] !== undefined && after[name] === undefined,
  );
  const values: Record<string, unknown> = { ':rev': current.rev };
  let condition = 'rev = :rev';
  // Removing a listing key (a deletion) holds whatever the posts moved meanwhile: only a value
  // written from what was read must be sure no post came in between.
  if (set.some(([name]) => APPEND_FIELDS.has(name))) {
    condition += ' AND messageCount = :messageCount AND lastMessageAt = :lastMessageAt';
    values[':messageCount'] = current.messageCount;
    values[':lastMessageAt'] = current.lastMessageAt;
  }
  return {
    action: {
      Update: {
        TableName: tableName,
        Key: keys.conversation(current.organizationId, current.id),
        ...updateExpression({ set: Object.fromEntries(set), remove }, { expression: condition, values }),
      },
    },
  };
}
