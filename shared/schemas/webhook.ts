import { isoInstant, offsetPage, offsetQuery, uuid } from './common';
import { domainEventTypes } from './events';
import { built, documented, lazily, named } from './names';
import * as z from './zod';

/** What a webhook can subscribe to: every domain event of the outbox, and nothing else. */
export const eventCatalog: readonly { event: string; description: string }[] = [
  { event: 'conversation.created', description: 'A conversation was started' },
  {
    event: 'conversation.updated',
    description: 'A conversation changed (status, priority, assignment, tags, metadata…)',
  },
  {
    event: 'conversation.snoozed',
    description: 'A conversation was snoozed; data.snoozeReason carries the reason',
  },
  { event: 'conversation.closed', description: 'A conversation was closed' },
  { event: 'conversation.deleted', description: 'A conversation was deleted' },
  { event: 'conversation.assigned', description: 'A conversation was assigned, transferred or unassigned' },
  { event: 'message.created', description: 'A message was sent or received' },
  { event: 'message.updated', description: 'A message was edited' },
  { event: 'note.created', description: 'An internal note was added (never sent to visitors)' },
  { event: 'note.deleted', description: 'An internal note was deleted' },
  { event: 'visitor.created', description: 'A visitor (contact) was created: widget bootstrap or upsert' },
  {
    event: 'visitor.updated',
    description: 'A visitor’s profile changed (name, e-mail, phone, externalId, metadata…)',
  },
  {
    event: 'visitor.merged',
    description: 'A visitor was merged into another: data is the target after the merge',
  },
  {
    event: 'visitor.erased',
    description: 'A visitor’s personal data was erased (GDPR); data is the anonymized visitor',
  },
];
const eventName = z.enum(domainEventTypes as [string, ...string[]]);

export const webhook = named('Webhook', () =>
  z.object({
    id: uuid,
    url: z.string(),
    events: z.array(z.string()),
    active: z.boolean(),
    createdAt: isoInstant,
    updatedAt: isoInstant,
  }),
);
export type Webhook = z.infer<typeof webhook>;

export const createdWebhook = named('CreatedWebhook', () =>
  z.object({
    ...built(webhook).shape,
    /** Only when the service generated the secret: shown once, never again. */
    secret: z.optional(z.string()),
  }),
);

/** The target checks decide (https only, or an admitted host:port); the scheme is stated for clients. */
const url = documented(z.string().check(z.trim(), z.minLength(1), z.maxLength(2048)), {
  format: 'uri',
  pattern: '^https?://',
});
const events = lazily(() => z.array(eventName).check(z.minLength(1), z.maxLength(domainEventTypes.length)));

export const createWebhookBody = named('CreateWebhookRequest', () =>
  z.strictObject({
    url,
    events,
    /** A Standard Webhooks secret (`whsec_` + base64 of ≥ 24 bytes); generated when omitted. */
    secret: z.optional(
      documented(z.string().check(z.maxLength(200)), { pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$' }),
    ),
  }),
);

export const updateWebhookBody = named('UpdateWebhookRequest', () =>
  z.strictObject({
    url: z.optional(url),
    events: z.optional(events),
    active: z.optional(z.boolean()),
  }),
);

export const webhookList = named('WebhookPage', () => offsetPage(webhook));
export const webhookListQuery = lazily(() => z.strictObject(offsetQuery));

export const deliveryStatus = z.enum(['pending', 'succeeded', 'failed']);

export const delivery = named('Delivery', () =>
  z.object({
    id: uuid,
    webhookId: uuid,
    eventId: uuid,
    event: z.string(),
    status: deliveryStatus,
    attempts: z.int(),
    responseStatus: z.nullable(z.int()),
    error: z.nullable(z.string()),
    createdAt: isoInstant,
    lastAttemptAt: z.nullable(isoInstant),
    nextAttemptAt: z.nullable(isoInstant),
  }),
);
export type Delivery = z.infer<typeof delivery>;

export const deliveryList = named('DeliveryPage', () => offsetPage(delivery));
export const deliveryListQuery = lazily(() => z.strictObject(offsetQuery));

export const webhookParams = lazily(() => z.strictObject({ id: uuid }));
export const deliveryParams = lazily(() => z.strictObject({ id: uuid, deliveryId: uuid }));
