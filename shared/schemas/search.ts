import { MAX_QUERY_LENGTH } from '../search/query';
import { cursorParam, isoInstant, pageLimit, plainText } from './common';
import { conversation } from './conversation';
import { documented, lazily, named } from './names';
import * as z from './zod';

export const searchSorts = ['relevance', 'newest', 'oldest'] as const;

export const searchConversationsQuery = lazily(() =>
  z.strictObject({
    q: documented(
      z
        .string()
        .check(
          z.minLength(
            1,
            `Invalid query: the query must be 1 to ${MAX_QUERY_LENGTH} characters long at offset 0`,
          ),
          z.maxLength(
            MAX_QUERY_LENGTH,
            `Invalid query: the query must be 1 to ${MAX_QUERY_LENGTH} characters long at offset ${MAX_QUERY_LENGTH}`,
          ),
          plainText(),
        ),
      {
        description:
          'The query (1–1,000 characters, at most 50 terms and filters): words (all must match; word forms of the organization’s `defaultLocale` match), `word*` (prefix, at least 2 characters), `"a phrase"`, `OR`, `-clause` / `NOT clause`, parentheses (4 levels), and filters: `status:`, `priority:`, `tag:`, `operator:<uuid>|none`, `team:<uuid>|none`, `visitor:<uuid>`, `from:visitor|operator`, `in:messages|notes|title`, `cf.<field>:`, `created>` `created<` `updated>` `updated<` a date or an instant. Quoted values allowed (`tag:"vip customer"`).',
      },
    ),
    sort: z.optional(z.enum(searchSorts)),
    cursor: z.optional(cursorParam),
    limit: pageLimit(20, 100),
  }),
);
export type SearchConversationsQuery = z.infer<typeof searchConversationsQuery>;

export const searchMatch = named('SearchMatch', () =>
  z.object({
    kind: z.enum(['message', 'note', 'title']),
    id: documented(z.nullable(z.string()), { description: 'The message or note id; null for the title' }),
    snippet: documented(z.string(), {
      description:
        'At most 300 characters of the matched text around the match (counted before escaping and marking), HTML-escaped, each matched word wrapped in `<mark>` and `</mark>`',
    }),
    createdAt: isoInstant,
  }),
);

export const searchHit = named('SearchHit', () =>
  z.object({
    conversation,
    score: documented(z.nullable(z.number()), {
      description:
        'The relevance; 0 for a match older than the newest 1,000 ranked; null unless sorted by relevance',
    }),
    matches: documented(z.array(searchMatch), { description: 'At most 3, best first' }),
  }),
);

export const searchPage = named('SearchPage', () =>
  z.object({
    data: z.array(searchHit),
    nextCursor: z.nullable(z.string()),
    total: documented(z.int().check(z.minimum(0)), {
      description: 'The exact number of matching conversations, up to 10,000',
    }),
    totalCapped: z.optional(
      documented(z.boolean(), { description: 'Present (true) when more than 10,000 conversations match' }),
    ),
  }),
);
