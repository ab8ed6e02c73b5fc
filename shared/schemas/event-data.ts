import { isoInstant, uuid } from './common';
import { conversation } from './conversation';
import type { DomainEventType } from './events';
import { messageRecord } from './message';
import { built, named } from './names';
import { note } from './note';
import { visitorProfile } from './visitor';
import * as z from './zod';

const actor = named(
  'Actor',
  () => z.object({ type: z.enum(['api_key', 'operator', 'visitor']), id: z.string() }),
  'Who made a change: an API key, an operator or a visitor, by id',
);

/**
 * What `data` holds for each event type: the resource after the change, with the very schema its
 * REST answer uses, so a webhook payload, a feed entry and a GET of the same version read alike.
 */
export const eventDataSchemas = {
  'conversation.created': conversation,
  'conversation.updated': conversation,
  'conversation.snoozed': named('SnoozedConversation', () =>
    z.object({
      ...built(conversation).shape,
      /** The reason given to the snooze, or null. */
      snoozeReason: z.nullable(z.string()),
    }),
  ),
  'conversation.closed': conversation,
  'conversation.deleted': named('DeletedConversation', () =>
    z.object({ id: uuid, deletedAt: isoInstant, version: z.int() }),
  ),
  'conversation.assigned': conversation,
  'message.created': messageRecord,
  'message.updated': messageRecord,
  'note.created': note,
  'note.deleted': named('DeletedNote', () =>
    z.object({ id: uuid, conversationId: uuid, deletedBy: actor, deletedAt: isoInstant }),
  ),
  'visitor.created': visitorProfile,
  'visitor.updated': visitorProfile,
  'visitor.merged': visitorProfile,
  'visitor.erased': visitorProfile,
} as const satisfies Record<DomainEventType, z.ZodMiniType>;
