import type { OrgCaller } from '../../shared/auth/caller';
import { clock } from '../../shared/clock';
import { messageEdits } from '../../shared/db/message-edit';
import { type Message, messages, toMessage } from '../../shared/db/messages';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../shared/errors';
import { ok, route } from '../../shared/http/route';
import { sanitizeText, searchVectorOf } from '../../shared/sanitize/text';
import { ids, replyExample } from '../../shared/schemas/examples';
import { editMessageBody, message, messageParams, revisions } from '../../shared/schemas/message';
import { presentMessage } from '../../shared/uploads/present';
import { loadConversation, loadConversationWith } from './access';

export const EDIT_WINDOW_MS = 5 * 60_000;

/**
 * Visitors edit their own visitor messages, operators their own messages; API keys and admin
 * sessions may edit any operator or bot message.
 */
function mayEdit(caller: OrgCaller, target: Message): boolean {
  if (caller.kind === 'visitor')
    return target.senderType === 'visitor' && target.senderId === caller.visitorId;
  const staffMessage = target.senderType === 'operator' || target.senderType === 'bot';
  if (caller.kind === 'apiKey') return staffMessage;
  if (caller.kind === 'operator') {
    if (caller.role === 'admin' && staffMessage) return true;
    return target.senderType === 'operator' && target.senderId === caller.operatorId;
  }
  return false;
}

function editorId(caller: OrgCaller): string {
  if (caller.kind === 'visitor') return caller.visitorId;
  if (caller.kind === 'operator') return caller.operatorId;
  return caller.credentialId;
}

export const editMessage = route({
  method: 'PATCH',
  path: '/api/conversations/{id}/messages/{messageId}',
  operationId: 'editMessage',
  summary: 'Edit a message',
  description:
    'Only within 5 minutes of creation (after: 409 with `details.reason = "edit_window_expired"`) and only a message that is not deleted (404). Visitors edit their own visitor messages, operators their own messages, API keys and admin sessions any operator or bot message (403 otherwise). Content is sanitized; the prior version is kept (the 20 most recent, with `editedBy`); `message.updated` and the realtime `message_edited` follow.',
  tag: 'Messages',
  scope: 'conversations:write',
  callers: ['apiKey', 'operator', 'visitor'],
  params: messageParams,
  body: editMessageBody,
  response: { status: 200, schema: message, description: 'The message after the edit' },
  errors: [404, 409],
  examples: {
    request: { content: 'It left our warehouse this morning: tracking number 1Z999AA1' },
    response: {
      ...replyExample,
      content: 'It left our warehouse this morning: tracking number 1Z999AA1',
      searchVector: 'it left our warehouse this morning tracking number 1z999aa1',
      isEdited: true,
      editedAt: '2026-11-21T10:04:00.000Z',
    },
  },
  handle: async ({ caller, organization, params, body }) => {
    const conversation = await loadConversation(caller, organization, params.id);
    const content = sanitizeText(body.content);
    if (content === '') throw ValidationError.field('content', 'The message has no text once sanitized');
    const edited = await messageEdits.edit(
      conversation,
      params.messageId,
      (current): Message => {
        if (!mayEdit(caller, current)) throw new ForbiddenError('This message is not yours to edit');
        const now = clock.nowIso();
        if (clock.nowMs() - Date.parse(current.createdAt) > EDIT_WINDOW_MS) {
          throw new ConflictError('Messages can be edited only within 5 minutes of being sent', {
            reason: 'edit_window_expired',
          });
        }
        return {
          ...toMessage(current),
          content,
          // A file message given text is a text message with files.
          type: current.type === 'file' ? 'text' : current.type,
          searchVector: searchVectorOf(content),
          isEdited: true,
          editedAt: now,
        };
      },
      editorId(caller),
    );
    return ok(await presentMessage(edited));
  },
});

export const listRevisions = route({
  method: 'GET',
  path: '/api/conversations/{id}/messages/{messageId}/revisions',
  operationId: 'listMessageRevisions',
  summary: 'Edit history of a message',
  description: 'The prior versions, newest first, at most the 20 most recent.',
  tag: 'Messages',
  scope: 'conversations:read',
  callers: ['apiKey', 'operator', 'visitor'],
  params: messageParams,
  response: { status: 200, schema: revisions, description: 'The revision envelope' },
  errors: [404],
  examples: {
    response: {
      messageId: ids.reply,
      edits: [
        { content: replyExample.content, editedAt: '2026-11-21T10:04:00.000Z', editedBy: ids.operator },
      ],
    },
  },
  handle: async ({ caller, organization, params }) => {
    // One trip: the conversation (access rules) and the message in one BatchGetItem, the edits beside.
    const [{ message: current }, edits] = await Promise.all([
      loadConversationWith(caller, organization, params.id, params.messageId),
      messages.revisions(caller.orgId, params.id, params.messageId),
    ]);
    if (!current) throw new NotFoundError('Message not found');
    return ok({ messageId: params.messageId, edits });
  },
});
