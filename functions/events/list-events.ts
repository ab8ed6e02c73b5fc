import { feed } from '../../shared/db/event-feed';
import { type DomainEventType, domainEventTypes } from '../../shared/db/events';
import { ValidationError } from '../../shared/errors';
import { ok, route } from '../../shared/http/route';
import { cursorParam } from '../../shared/schemas/common';
import { eventPage } from '../../shared/schemas/event-feed';
import { cursorExample, ids, replyExample } from '../../shared/schemas/examples';
import { lazily } from '../../shared/schemas/names';
import * as z from '../../shared/schemas/zod';

const eventsQuery = lazily(() =>
  z.strictObject({
    cursor: z.optional(cursorParam),
    limit: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(100)), 50),
    /** Comma-separated event types, any of which matches. */
    types: z.optional(
      z
        .string()
        .check(z.minLength(1), z.maxLength(500), z.regex(/^[a-z., ]+$/, 'Comma-separated event types')),
    ),
  }),
);

function parseTypes(raw: string | undefined): DomainEventType[] | undefined {
  if (raw === undefined) return undefined;
  const types = [...new Set(raw.split(',').map((type) => type.trim()))];
  const unknown = types.find((type) => !(domainEventTypes as readonly string[]).includes(type));
  if (unknown !== undefined) {
    throw ValidationError.field(
      'types',
      `Unknown event type "${unknown}"; known: ${domainEventTypes.join(', ')}`,
    );
  }
  return types as DomainEventType[];
}

export const listEvents = route({
  method: 'GET',
  path: '/api/events',
  operationId: 'listEvents',
  summary: 'Events feed',
  description: [
    'The organization’s events, oldest first, in the webhook payload envelope, for catching up after missed deliveries. Kept at least 30 days. `limit` default 50, max 100; `types` is comma-separated (any of).',
    '',
    'A page is `{ data, nextCursor, done }`. Unlike other cursor pages, `nextCursor` stays a string at the end of the feed: `done: true` says the page reached the current end, and the same cursor later returns the events that appeared since. `nextCursor` is null only when the organization has no event yet. An event appears about one second after its change commits (never more than 5 s), and a cursor never skips an event that appears later.',
    '',
    'Read until `done`, then poll with the last cursor every few seconds:',
    '',
    '```js',
    'let cursor = null;',
    'for (;;) {',
    "  const query = cursor ? '&cursor=' + encodeURIComponent(cursor) : '';",
    "  const page = await (await fetch(base + '/api/events?limit=100' + query, { headers })).json();",
    '  for (const event of page.data) handle(event);',
    '  cursor = page.nextCursor ?? cursor;',
    '  if (page.done) await new Promise((resolve) => setTimeout(resolve, 5000));',
    '}',
    '```',
  ].join('\n'),
  tag: 'Events',
  scope: 'webhooks:read',
  callers: ['apiKey', 'operator'],
  query: eventsQuery,
  response: {
    status: 200,
    schema: eventPage,
    description: 'A page of events',
  },
  errors: [400],
  examples: {
    response: {
      data: [
        {
          id: ids.event,
          type: 'message.created',
          timestamp: replyExample.createdAt,
          organizationId: ids.organization,
          data: replyExample,
        },
      ],
      nextCursor: cursorExample,
      done: true,
    },
  },
  handle: async ({ caller, query }) =>
    ok(
      await feed(caller.orgId, { cursor: query.cursor, limit: query.limit, types: parseTypes(query.types) }),
    ),
});
