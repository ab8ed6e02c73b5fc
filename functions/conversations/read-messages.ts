import { listMessages as listPage } from '../../shared/db/message-listing';
import { NotFoundError } from '../../shared/errors';
import { ok, route } from '../../shared/http/route';
import { idParams } from '../../shared/schemas/common';
import { messageExample, replyExample } from '../../shared/schemas/examples';
import { listMessagesQuery, message, messagePage, messageParams } from '../../shared/schemas/message';
import { presentMessage, presentMessages } from '../../shared/uploads/present';
import { loadConversation, loadConversationWith } from './access';

export const listMessages = route({
  method: 'GET',
  path: '/api/conversations/{id}/messages',
  operationId: 'listMessages',
  summary: 'List messages',
  description:
    'Newest first; `nextCursor` fetches older messages (`limit` default 50, max 100). A deleted message is listed with `deletedAt` set and empty `content`. Internal notes are never messages, so visitors never see them.',
  tag: 'Messages',
  scope: 'conversations:read',
  callers: ['apiKey', 'operator', 'visitor'],
  params: idParams,
  query: listMessagesQuery,
  response: { status: 200, schema: messagePage, description: 'A page of messages' },
  errors: [400, 404],
  examples: { response: { data: [replyExample, messageExample], nextCursor: null } },
  handle: async ({ caller, organization, params, query }) => {
    // In parallel: the access rules need the conversation, the page comes from its partition.
    const [, page] = await Promise.all([
      loadConversation(caller, organization, params.id),
      listPage(caller.orgId, params.id, query),
    ]);
    return ok({ data: await presentMessages(page.data), nextCursor: page.nextCursor });
  },
});

export const getMessage = route({
  method: 'GET',
  path: '/api/conversations/{id}/messages/{messageId}',
  operationId: 'getMessage',
  summary: 'Get a message',
  tag: 'Messages',
  scope: 'conversations:read',
  callers: ['apiKey', 'operator', 'visitor'],
  params: messageParams,
  response: { status: 200, schema: message, description: 'The message' },
  errors: [404],
  examples: { response: messageExample },
  handle: async ({ caller, organization, params }) => {
    const { message: found } = await loadConversationWith(caller, organization, params.id, params.messageId);
    if (!found) throw new NotFoundError('Message not found');
    return ok(await presentMessage(found));
  },
});
