import { listConversations as listPage, syncConversations } from '../../shared/db/conversation-listing';
import { ok, route } from '../../shared/http/route';
import type { ListConversationsQuery } from '../../shared/schemas/conversation';
import { conversationPage, listConversationsQuery } from '../../shared/schemas/conversation';
import { conversationExample, cursorExample } from '../../shared/schemas/examples';
import { historyCutoff } from './access';

export const listConversations = route({
  method: 'GET',
  path: '/api/conversations',
  operationId: 'listConversations',
  summary: 'List conversations',
  description:
    'Newest `lastMessageAt` first, cursor pages (`limit` default 20, max 100). Filters combine (AND). Visitors see only their own conversations; a visitor filtering on another `visitorId` gets an empty page. Conversations outside the history window are not listed.\n\nWith `updatedSince` (an instant; any age, for a full resync) the page is for incremental sync: conversations whose `updatedAt` ≥ the instant, oldest `updatedAt` first, soft-deleted ones included with `deletedAt` set (their text fields may be blanked once purged), combined with the other filters, as `{ data, nextCursor, done }` like the events feed: at the current end `done` is true and `nextCursor` stays a string to poll with. The cursor resumes exactly after the last change served; a conversation is served again only if it changed again. A filtered page may be short. Changes appear about one second after they commit.',
  tag: 'Conversations',
  scope: 'conversations:read',
  callers: ['apiKey', 'operator', 'visitor'],
  query: listConversationsQuery,
  response: { status: 200, schema: conversationPage, description: 'A page of conversations' },
  errors: [400],
  examples: { response: { data: [conversationExample], nextCursor: cursorExample } },
  handle: async ({ caller, organization, query }) => {
    const page = (filters: ListConversationsQuery) =>
      query.updatedSince !== undefined
        ? syncConversations(
            caller.orgId,
            filters,
            new Date(query.updatedSince).toISOString(),
            historyCutoff(organization),
          )
        : listPage(caller.orgId, filters, historyCutoff(organization));
    if (caller.kind === 'visitor') {
      if (query.visitorId !== undefined && query.visitorId !== caller.visitorId)
        return ok({ data: [], nextCursor: null });
      return ok(await page({ ...query, visitorId: caller.visitorId }));
    }
    return ok(await page(query));
  },
});
