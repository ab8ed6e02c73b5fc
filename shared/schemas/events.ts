/**
 * The domain events every change writes to the outbox: the events feed serves them and webhooks
 * subscribe to them. A schema-level fact, so schemas, the data layer and the catalog share it.
 */
export type DomainEventType =
  | 'conversation.created'
  | 'conversation.updated'
  | 'conversation.snoozed'
  | 'conversation.closed'
  | 'conversation.deleted'
  | 'conversation.assigned'
  | 'message.created'
  | 'message.updated'
  | 'note.created'
  | 'note.deleted'
  | 'visitor.created'
  | 'visitor.updated'
  | 'visitor.merged'
  | 'visitor.erased';

export const domainEventTypes: readonly DomainEventType[] = [
  'conversation.created',
  'conversation.updated',
  'conversation.snoozed',
  'conversation.closed',
  'conversation.deleted',
  'conversation.assigned',
  'message.created',
  'message.updated',
  'note.created',
  'note.deleted',
  'visitor.created',
  'visitor.updated',
  'visitor.merged',
  'visitor.erased',
];
