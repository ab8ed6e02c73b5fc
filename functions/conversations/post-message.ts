import type { OrgCaller } from '../../shared/auth/caller';
import { clock } from '../../shared/clock';
import { messagePosts } from '../../shared/db/message-post';
import { newMessage } from '../../shared/db/messages';
import { metadataOf, notAttachable, ownerOf, type StoredUpload, uploads } from '../../shared/db/uploads';
import { ValidationError } from '../../shared/errors';
import { created, route } from '../../shared/http/route';
import { idParams } from '../../shared/schemas/common';
import { ids, replyExample } from '../../shared/schemas/examples';
import { message, postMessageBody } from '../../shared/schemas/message';
import { presentMessage } from '../../shared/uploads/present';
import { accessRules } from './access';

function senderOf(caller: OrgCaller, operatorId: string | undefined) {
  if (caller.kind === 'apiKey') {
    if (!operatorId)
      throw ValidationError.field('operatorId', 'API keys must name the operator the message is from');
    return { senderType: 'operator' as const, senderId: operatorId, checkOperator: true };
  }
  if (operatorId)
    throw ValidationError.field('operatorId', 'Only API keys name an operator; the session is the sender');
  if (caller.kind === 'visitor')
    return { senderType: 'visitor' as const, senderId: caller.visitorId, checkOperator: false };
  if (caller.kind === 'operator')
    return { senderType: 'operator' as const, senderId: caller.operatorId, checkOperator: false };
  throw new Error(`unexpected caller ${caller.kind}`);
}

/**
 * The uploads a message names, read at once (one BatchGetItem) and checked in order: each must be
 * ready, the caller's, attached to nothing, and named once. The message's transaction checks the
 * same again on each upload item (a concurrent post may claim one meanwhile).
 */
async function attachable(caller: OrgCaller, uploadIds: readonly string[]): Promise<StoredUpload[]> {
  if (uploadIds.length === 0) return [];
  const found = await uploads.getMany(caller.orgId, uploadIds);
  const owner = ownerOf(caller);
  return uploadIds.map((uploadId, i) => {
    const upload = found.get(uploadId);
    const usable =
      upload?.status === 'ready' &&
      upload.owner === owner &&
      upload.messageId === null &&
      uploadIds.indexOf(uploadId) === i;
    if (!usable || !upload) throw notAttachable(i);
    return upload;
  });
}

export const postMessage = route({
  method: 'POST',
  path: '/api/conversations/{id}/messages',
  operationId: 'postMessage',
  summary: 'Send a message',
  description:
    '`attachmentIds` (at most 10) names ready uploads (`POST /api/uploads`) made by the same caller and attached to no message yet (422 on `attachmentIds.<i>` otherwise); with attachments `content` may be empty, and a message without text is `type: "file"`. Each attachment is answered with a fresh download URL (15 min). The sender comes from the credential: a visitor writes as the visitor, an operator session as its operator, an API key as the operator named by `operatorId` (required for keys only: `GET /api/operators` lists the organization’s operators and their ids). Content is sanitized to text. `replyToId` must be a message of the same conversation and `mentions` operators of the organization (422 otherwise). Updates the conversation’s computed fields and writes `message.created` in the same transaction. Concurrent posts into one conversation do not contend (its counts and last message move without a read-modify-write race), and a post does not change the conversation’s `version`: an `If-Match` taken before it still holds.',
  tag: 'Messages',
  scope: 'conversations:write',
  callers: ['apiKey', 'operator', 'visitor'],
  params: idParams,
  body: postMessageBody,
  response: { status: 201, schema: message, description: 'The message' },
  errors: [404],
  examples: {
    request: { content: replyExample.content, operatorId: ids.operator, replyToId: ids.message },
    response: replyExample,
  },
  handle: async ({ caller, organization, params, body }) => {
    const sender = senderOf(caller, body.operatorId);
    const orgId = caller.orgId;
    const files = await attachable(caller, body.attachmentIds ?? []);
    const posted = await messagePosts.post(
      orgId,
      params.id,
      (current) => {
        const draft = newMessage({
          orgId,
          conversationId: current.id,
          senderType: sender.senderType,
          senderId: sender.senderId,
          content: body.content ?? '',
          now: clock.nowIso(),
          replyToId: body.replyToId,
          mentions: body.mentions,
          attachments: files.map(metadataOf),
        });
        if (draft.content === '' && files.length === 0)
          throw ValidationError.field(
            'content',
            'The message has no text once sanitized, and no attachments',
          );
        return draft;
      },
      {
        check: accessRules(caller, organization),
        namedSenderId: sender.checkOperator ? sender.senderId : undefined,
        mentioned: body.mentions,
        uploadOwner: ownerOf(caller),
      },
    );
    return created(await presentMessage(posted));
  },
});
