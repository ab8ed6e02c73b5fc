import { isoInstant, uuid } from './common';
import { conversation } from './conversation';
import { type DomainEventType, domainEventTypes } from './events';
import { message } from './message';
import { named } from './names';
import { note } from './note';
import * as z from './zod';

const actor = named(
  'Actor',
  z.object({ type: z.enum(['api_key', 'operator', 'visitor']), id: z.string() }),
  'Who made a change: an API key, an operator or a visitor, by id',
);

/**
 * What `data` holds for each event type: the resource after the change, with the very schema its
 * REST answer uses, so a webhook payload, a feed entry and a GET of the same version read alike.
 */
export const eventDataSchemas = {
  'conversation.created': conversation,
  'conversation.updated': conversation,
  'conversation.snoozed': named(
    'SnoozedConversation',
    z.object({
      ...conversation.shape,
      /** The reason given to the snooze, or null. */
      snoozeReason: z.nullable(z.string()),
    }),
  ),
  'conversation.closed': conversation,
  'conversation.deleted': named(
    'DeletedConversation',
    z.object({ id: uuid, deletedAt: isoInstant, version: z.int() }),
  ),
  'conversation.assigned': conversation,
  'message.created': message,
  'message.updated': message,
  'note.created': note,
  'note.deleted': named(
    'DeletedNote',
    z.object({ id: uuid, conversationId: uuid, deletedBy: actor, deletedAt: isoInstant }),
  ),
} as const satisfies Record<DomainEventType, z.ZodMiniType>;

/** An event as the feed serves it and webhooks deliver it. */
export const domainEvent = named(
  'Event',
  z.object({
    id: uuid,
    type: z.enum(domainEventTypes as [DomainEventType, ...DomainEventType[]]),
    timestamp: isoInstant,
    organizationId: uuid,
    /** The resource after the change; conversation events carry `data.version`. */
    data: z.unknown(),
  }),
);

export const eventPage = named(
  'EventPage',
  z.object({
    data: z.array(domainEvent),
    /** Null only when the organization has no event yet; at the end of the feed, the cursor to poll with. */
    nextCursor: z.nullable(z.string()),
    /** True when this page reached the current end of the feed: poll later with `nextCursor`. */
    done: z.boolean(),
  }),
);
