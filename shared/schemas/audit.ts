import { cursorPage, cursorParam, isoInstant, pageLimit } from './common';
import { lazily, named } from './names';
import * as z from './zod';

/** Who the audit log names as acting. */
export const auditActorTypes = ['api_key', 'operator', 'visitor', 'platform', 'system'] as const;

/**
 * The `type` values the contract lists; the log also holds `impersonation.request` (one entry per
 * request of an impersonation session, written before it runs).
 */
export const auditEventTypes = [
  'api_key.created',
  'api_key.revoked',
  'operator.created',
  'impersonation.started',
  'impersonation.stopped',
  'impersonation.request',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
  'export.streamed',
  'transcript.emailed',
  'conversation.bulk_closed',
  'conversation.bulk_deleted',
  'note.deleted',
  'custom_field.deleted',
  'visitor.merged',
  'visitor.erased',
  'chatbot.config_updated',
  'ai_provider.created',
  'ai_provider.updated',
  'ai_provider.deleted',
] as const;

export const auditEvent = named(
  'AuditEvent',
  () =>
    z.object({
      id: z.uuid(),
      type: z.string(),
      at: isoInstant,
      actor: z.object({
        type: z.enum(auditActorTypes),
        id: z.string(),
        name: z.nullable(z.string()),
      }),
      /** The platform actor's id when the action was done under impersonation. */
      impersonatedBy: z.nullable(z.string()),
      target: z.object({ type: z.string(), id: z.string() }),
      details: z.record(z.string(), z.unknown()),
    }),
  'One entry of the audit log: who did what to what, and when.',
);

export const auditEventPage = named('AuditEventPage', () => cursorPage(auditEvent));

/** An instant with any offset, as filters take it; compared in UTC. */
const instant = lazily(() => z.iso.datetime({ offset: true }));
/** Ids and types are printable ASCII (a route target reads `PUT /api/chatbot/config`). */
const filterText = lazily(() =>
  z.string().check(z.minLength(1), z.maxLength(200), z.regex(/^[\x20-\x7E]+$/, 'Printable ASCII')),
);

export const auditEventsQuery = lazily(() =>
  z.strictObject({
    cursor: z.optional(cursorParam),
    limit: pageLimit(50, 100),
    type: z.optional(filterText),
    actorType: z.optional(z.enum(auditActorTypes)),
    actorId: z.optional(filterText),
    targetType: z.optional(filterText),
    targetId: z.optional(filterText),
    since: z.optional(instant),
    until: z.optional(instant),
  }),
);
export type AuditEventsQuery = z.infer<typeof auditEventsQuery>;
