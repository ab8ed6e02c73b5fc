import type { ApiKeyCaller, OperatorCaller } from '../../shared/auth/caller';
import { clock } from '../../shared/clock';
import { actorOf } from '../../shared/conversations/actor';
import { newNote, notes } from '../../shared/db/notes';
import { operators } from '../../shared/db/operators';
import { auditActorOf } from '../../shared/db/org-audit';
import { ForbiddenError, NotFoundError, UnauthorizedError, ValidationError } from '../../shared/errors';
import { created, ok, route } from '../../shared/http/route';
import { idParams, successResult } from '../../shared/schemas/common';
import { noteExample } from '../../shared/schemas/examples';
import { createNoteBody, note, noteList, noteParams } from '../../shared/schemas/note';
import { loadConversation } from './access';

/** An operator session writes as its operator (name read now, copied into the note); an API key as itself. */
async function authorOf(caller: ApiKeyCaller | OperatorCaller): Promise<{ id: string; name: string }> {
  if (caller.kind === 'apiKey') return { id: caller.credentialId, name: caller.name };
  const operator = await operators.get(caller.orgId, caller.operatorId);
  if (!operator) throw new UnauthorizedError('The operator of this session no longer exists');
  return { id: operator.id, name: operator.name };
}

export const listNotes = route({
  method: 'GET',
  path: '/api/conversations/{id}/notes',
  operationId: 'listNotes',
  summary: 'List internal notes',
  description:
    'The 200 most recent internal notes of the conversation, newest first, with author name, content, mentions and timestamps. Operators and API keys only: visitors never see notes (403).',
  tag: 'Notes',
  scope: 'conversations:read',
  callers: ['apiKey', 'operator'],
  params: idParams,
  response: { status: 200, schema: noteList, description: 'The notes, newest first' },
  errors: [404],
  examples: { response: { data: [noteExample] } },
  handle: async ({ caller, organization, params }) => {
    const [, data] = await Promise.all([
      loadConversation(caller, organization, params.id),
      notes.list(caller.orgId, params.id),
    ]);
    return ok({ data });
  },
});

export const createNote = route({
  method: 'POST',
  path: '/api/conversations/{id}/notes',
  operationId: 'createNote',
  summary: 'Write an internal note',
  description:
    'The author comes from the credential: an operator session writes as its operator, an API key as itself (`authorId` is the key id, `authorName` its name). Content is sanitized to text; `mentions` must be operators of the organization (422 with `details.field = "mentions.<i>"` otherwise). Writes `note.created` in the same transaction. Visitors cannot write notes (403).',
  tag: 'Notes',
  scope: 'conversations:write',
  callers: ['apiKey', 'operator'],
  params: idParams,
  body: createNoteBody,
  response: { status: 201, schema: note, description: 'The note' },
  errors: [404],
  examples: { request: { content: noteExample.content }, response: noteExample },
  handle: async ({ caller, organization, params, body }) => {
    const [conversation, author] = await Promise.all([
      loadConversation(caller, organization, params.id),
      authorOf(caller),
    ]);
    const draft = newNote({
      conversationId: conversation.id,
      authorId: author.id,
      authorName: author.name,
      content: body.content,
      mentions: body.mentions,
      now: clock.nowIso(),
    });
    if (draft.content === '') throw ValidationError.field('content', 'The note has no text once sanitized');
    await notes.create(caller.orgId, draft, body.mentions ?? []);
    return created(draft);
  },
});

export const deleteNote = route({
  method: 'DELETE',
  path: '/api/conversations/{id}/notes/{noteId}',
  operationId: 'deleteNote',
  summary: 'Delete an internal note',
  description:
    'Operator sessions, administrators included, delete only the notes they wrote (403 otherwise); an API key may delete any note of the conversation. 404 when the conversation has no such note, also for a second delete. The operator-only `note_invalidated` realtime notice, the audit entry and `note.deleted` are written in the same transaction.',
  tag: 'Notes',
  scope: 'conversations:write',
  callers: ['apiKey', 'operator'],
  params: noteParams,
  response: { status: 200, schema: successResult, description: 'The note was deleted' },
  errors: [404],
  examples: { response: { success: true } },
  handle: async ({ caller, organization, params }) => {
    await loadConversation(caller, organization, params.id);
    const result = await notes.remove({
      orgId: caller.orgId,
      conversationId: params.id,
      noteId: params.noteId,
      actor: actorOf(caller),
      by: auditActorOf(caller),
      ...(caller.kind === 'operator' ? { authorId: caller.operatorId } : {}),
    });
    if (!result.ok) {
      if (result.reason === 'not_author') throw new ForbiddenError('Operators delete only their own notes');
      throw new NotFoundError('Note not found');
    }
    return ok({ success: true });
  },
});
