import { listConversations as listPage } from '../../shared/db/conversation-listing';
import { ok, route } from '../../shared/http/route';
import { conversationPage, listConversationsQuery } from '../../shared/schemas/conversation';
import { conversationExample, cursorExample } from '../../shared/schemas/examples';
import { historyCutoff } from './access';

export const listConversations = route({
  method: 'GET',
  path: '/api/conversations',
  operationId: 'listConversations',
  summary: 'List conversations',
  description:
    'Newest `lastMessageAt` first, cursor pages (`limit` default 20, max 100). Filters combine (AND). Visitors see only their own conversations; a visitor filtering on another `visitorId` gets an empty page. Conversations outside the history window are not listed.',
  tag: 'Conversations',
  scope: 'conversations:read',
  callers: ['apiKey', 'operator', 'visitor'],
  query: listConversationsQuery,
  response: { status: 200, schema: conversationPage, description: 'A page of conversations' },
  errors: [400],
  examples: { response: { data: [conversationExample], nextCursor: cursorExample } },
  handle: async ({ caller, organization, query }) => {
    if (caller.kind === 'visitor') {
      if (query.visitorId !== undefined && query.visitorId !== caller.visitorId)
        return ok({ data: [], nextCursor: null });
      return ok(
        await listPage(caller.orgId, { ...query, visitorId: caller.visitorId }, historyCutoff(organization)),
      );
    }
    return ok(await listPage(caller.orgId, query, historyCutoff(organization)));
  },
});
