import { clock } from '../clock';
import type { Actor } from '../conversations/actor';
import { NotFoundError, ValidationError } from '../errors';
import { uuidv7 } from '../ids';
import { sanitizeText } from '../sanitize/text';
import type { Note } from '../schemas/note';
import { noteProjection } from '../schemas/projections';
import { auditWrite } from './audit';
import { tableName } from './client';
import { conversationLive } from './conversation-item';
import { eventWrite, realtimeWrite } from './events';
import { keys } from './keys';
import { operators } from './operators';
import { type AuditBy, orgAudit } from './org-audit';
import { project } from './project';
import { queryPrefix } from './query';
import { transact, type Write } from './transaction';

export type { Note };

/** A conversation lists at most this many notes, newest first. */
export const NOTE_LIST_LIMIT = 200;

export const toNote: (item: object) => Note = project<Note>(noteProjection);

export function newNote(input: {
  conversationId: string;
  authorId: string;
  authorName: string;
  content: string;
  now: string;
  mentions?: readonly string[] | undefined;
}): Note {
  return {
    id: uuidv7(Date.parse(input.now)),
    conversationId: input.conversationId,
    authorId: input.authorId,
    authorName: input.authorName,
    content: sanitizeText(input.content),
    mentions: [...new Set(input.mentions ?? [])],
    createdAt: input.now,
    updatedAt: input.now,
  };
}

export function noteItem(orgId: string, note: Note) {
  return { ...keys.note(orgId, note.conversationId, note.id), entity: 'note', ...note };
}

/** `not_found`: no such note in the conversation; `not_author`: it exists but was written by someone else. */
export type DeleteNoteResult =
  | { ok: true; deletedAt: string }
  | { ok: false; reason: 'not_found' | 'not_author' };

/**
 * The delete (first, so its cancellation reason is at index 0), `note.deleted`, the operator-only
 * realtime invalidation and the conversation's audit entry.
 */
function deleteWrites(
  input: {
    orgId: string;
    conversationId: string;
    noteId: string;
    actor: Actor;
    authorId?: string;
    by?: AuditBy;
  },
  deletedAt: string,
): Write[] {
  const { orgId, conversationId, noteId, actor } = input;
  return [
    {
      action: {
        Delete: {
          TableName: tableName,
          Key: keys.note(orgId, conversationId, noteId),
          ...(input.authorId === undefined
            ? { ConditionExpression: 'attribute_exists(pk)' }
            : {
                ConditionExpression: 'attribute_exists(pk) AND authorId = :me',
                ExpressionAttributeValues: { ':me': input.authorId },
              }),
          // The old item comes back on a failed condition: present means "not yours", absent "no such note".
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      onConditionFailed: (item) => new NoteRefused(item ? 'not_author' : 'not_found'),
    },
    eventWrite(orgId, 'note.deleted', { id: noteId, conversationId, deletedBy: actor, deletedAt }),
    realtimeWrite(orgId, {
      type: 'note_invalidated',
      audience: 'operators',
      conversationId,
      payload: { conversationId, noteId },
    }),
    auditWrite(orgId, conversationId, 'NOTE', { type: 'note.deleted', noteId, actor, at: deletedAt }),
    conversationLive(orgId, conversationId),
    {
      action: orgAudit.write(orgId, {
        ...(input.by ?? { actor }),
        type: 'note.deleted',
        target: { type: 'note', id: noteId },
        details: { conversationId },
      }),
    },
  ];
}

/** Why a note's delete was refused, from its own condition. */
class NoteRefused extends Error {
  constructor(readonly reason: 'not_author' | 'not_found') {
    super(`The note was not deleted: ${reason}`);
  }
}

/**
 * Refuses a mention of an operator the organization does not have, reported as the request named
 * it: `mentions.<i>`, `i` the index of its first mention in the request's list. One strongly
 * consistent read before the transaction rather than a check on each operator's item inside it (an
 * operator mentioned in many notes at once would make that item a queue); operators are never
 * deleted, so one found here still exists at the commit.
 */
async function verifyMentions(orgId: string, mentioned: readonly string[]): Promise<void> {
  const missing = await operators.missing(orgId, mentioned);
  const first = mentioned.findIndex((operatorId) => missing.has(operatorId));
  if (first >= 0)
    throw ValidationError.field(`mentions.${first}`, 'Mentions must be operators of this organization');
}

export const notes = {
  /**
   * Every mentioned operator read first (422 `mentions.<i>`), then one transaction: the note, its
   * `note.created` event and a check that the conversation is still live. `mentioned` is the list as
   * the request gave it (repeats included), so an error names the request's own index.
   */
  async create(orgId: string, note: Note, mentioned: readonly string[] = note.mentions): Promise<void> {
    await verifyMentions(orgId, mentioned);
    await transact([
      {
        action: {
          Put: {
            TableName: tableName,
            Item: noteItem(orgId, note),
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      },
      eventWrite(orgId, 'note.created', note),
      conversationLive(orgId, note.conversationId),
    ]);
  },

  /** Newest first (note ids are UUIDv7), at most 200: one Query, more only past 1 MB of notes. */
  async list(orgId: string, conversationId: string): Promise<Note[]> {
    const items = await queryPrefix(keys.conversationPartition(orgId, conversationId), keys.notePrefix, {
      newestFirst: true,
      limit: NOTE_LIST_LIMIT,
    });
    return items.map(toNote);
  },

  /**
   * Deletes a note of the conversation in one transaction with its event, realtime invalidation
   * and audit entry. With `authorId`, only a note written by that author is deleted. A failed
   * condition tells the two refusals apart without another read: the old item comes back only
   * when the note exists.
   */
  async remove(input: {
    orgId: string;
    conversationId: string;
    noteId: string;
    actor: Actor;
    authorId?: string;
    /** The audit log's actor (impersonation included); `actor` when absent. */
    by?: AuditBy;
  }): Promise<DeleteNoteResult> {
    const deletedAt = clock.nowIso();
    try {
      await transact(deleteWrites(input, deletedAt));
      return { ok: true, deletedAt };
    } catch (error) {
      if (error instanceof NoteRefused) return { ok: false, reason: error.reason };
      // The conversation was deleted meanwhile (`conversationLive`): its notes are gone with it.
      if (error instanceof NotFoundError) return { ok: false, reason: 'not_found' };
      throw error;
    }
  },
};
