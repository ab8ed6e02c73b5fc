import { isoInstant, uuid } from './common';
import { type DomainEventType, domainEventTypes } from './events';
import { named } from './names';
import * as z from './zod';

/** An event as the feed serves it and webhooks deliver it. */
export const domainEvent = named('Event', () =>
  z.object({
    id: uuid,
    type: z.enum(domainEventTypes as [DomainEventType, ...DomainEventType[]]),
    timestamp: isoInstant,
    organizationId: uuid,
    /** The resource after the change; conversation events carry `data.version`. */
    data: z.unknown(),
  }),
);

export const eventPage = named('EventPage', () =>
  z.object({
    data: z.array(domainEvent),
    /** Null only when the organization has no event yet; at the end of the feed, the cursor to poll with. */
    nextCursor: z.nullable(z.string()),
    /** True when this page reached the current end of the feed: poll later with `nextCursor`. */
    done: z.boolean(),
  }),
);
