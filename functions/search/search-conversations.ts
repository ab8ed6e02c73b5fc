import { conversationsById, toConversation } from '../../shared/db/conversations';
import { ok, route } from '../../shared/http/route';
import { conversationExample, cursorExample } from '../../shared/schemas/examples';
import { searchConversationsQuery, searchPage } from '../../shared/schemas/search';
import { search } from '../../shared/search/search';
import { historyCutoff } from '../conversations/access';

export const searchConversations = route({
  method: 'GET',
  path: '/api/conversations/search',
  operationId: 'searchConversations',
  summary: 'Search conversations',
  description:
    'Finds conversations by what was said in them (titles, messages, and internal notes for keys and operators) and by their fields. Relevance order by default when `q` has text terms (ties: newest `lastMessageAt`), else newest first; relevance ranks the newest 1,000 matching conversations, and when more match, the older ones follow them newest first with `score` 0 (every match is still reached by the cursor); `total` is exact up to 10,000. A change is searchable within 5 s. Visitors search their own conversations only, never notes. A query that does not parse is 422 with `details.field` = `q` and `details.offset`; a cursor used with another `q` or `sort` is 400.',
  tag: 'Conversations',
  scope: 'conversations:read',
  callers: ['apiKey', 'operator', 'visitor'],
  query: searchConversationsQuery,
  response: { status: 200, schema: searchPage, description: 'A page of matching conversations' },
  errors: [400],
  examples: {
    response: {
      data: [
        {
          conversation: conversationExample,
          score: 0.1,
          matches: [
            {
              kind: 'message',
              id: '01936f8e-7a3b-7c2d-9e4f-5a6b7c8d9e0f',
              snippet: 'I would like a <mark>refund</mark> for order 1234',
              createdAt: '2026-11-20T10:15:00.000Z',
            },
          ],
        },
      ],
      nextCursor: cursorExample,
      total: 1,
    },
  },
  handle: async ({ caller, organization, query }) => {
    const result = await search({
      orgId: caller.orgId,
      q: query.q,
      sort: query.sort,
      limit: query.limit,
      cursor: query.cursor,
      visitorId: caller.kind === 'visitor' ? caller.visitorId : undefined,
      since: historyCutoff(organization),
    });
    // The conversations as GET /api/conversations/{id} answers them: read from the table, the
    // system of record (the index trails it by a moment; one deleted meanwhile is left out).
    const byId = await conversationsById(
      caller.orgId,
      result.hits.map((hit) => hit.conversationId),
      { consistent: false },
    );
    const data = result.hits.flatMap((hit) => {
      const item = byId.get(hit.conversationId);
      if (!item) return [];
      if (caller.kind === 'visitor' && item.visitorId !== caller.visitorId) return [];
      return [{ conversation: toConversation(item), score: hit.score, matches: hit.matches }];
    });
    return ok({
      data,
      nextCursor: result.nextCursor,
      total: result.total,
      ...(result.totalCapped ? { totalCapped: true } : {}),
    });
  },
});
