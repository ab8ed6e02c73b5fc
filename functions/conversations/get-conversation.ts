import { toConversation } from '../../shared/db/conversations';
import { etagOf } from '../../shared/http/if-match';
import { ok, route } from '../../shared/http/route';
import { idParams } from '../../shared/schemas/common';
import { conversation } from '../../shared/schemas/conversation';
import { conversationExample } from '../../shared/schemas/examples';
import { loadConversation } from './access';

export const getConversation = route({
  method: 'GET',
  path: '/api/conversations/{id}',
  operationId: 'getConversation',
  summary: 'Get a conversation',
  description:
    'One read: the computed fields (`messageCount`, `unreadCount`, `lastMessage`, `firstResponseTimeMs`) and the visitor are kept on the conversation. Visitors see only their own conversations.',
  tag: 'Conversations',
  scope: 'conversations:read',
  callers: ['apiKey', 'operator', 'visitor'],
  params: idParams,
  versioned: 'read',
  response: { status: 200, schema: conversation, description: 'The conversation' },
  errors: [404],
  examples: { response: conversationExample },
  handle: async ({ caller, organization, params }) => {
    const found = await loadConversation(caller, organization, params.id);
    return ok(toConversation(found), { ETag: etagOf(found.version) });
  },
});
