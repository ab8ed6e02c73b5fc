import type { NotifiedConversation } from '../../../shared/discord/message';

/** A conversation as the Discord fan-out reads it from an event, for the notification message. */
export const notifiedConversation: NotifiedConversation = {
  id: '019a7c1f-0a11-7b22-9c33-0d44e55f6603',
  title: 'Where is my order?',
  status: 'open',
  priority: 'normal',
  source: 'widget',
  operatorId: null,
  lastMessage: { content: 'Hello, my order is late' },
};
