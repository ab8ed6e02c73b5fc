import { createConversation } from './create-conversation';
import { editMessage, listRevisions } from './edit-message';
import { getConversation } from './get-conversation';
import { listConversations } from './list-conversations';
import { postMessage } from './post-message';
import { getMessage, listMessages } from './read-messages';
import { markRead, markUnread } from './read-state';

export const conversationRoutes = [
  listConversations,
  createConversation,
  getConversation,
  markRead,
  listMessages,
  postMessage,
  markUnread,
  getMessage,
  editMessage,
  listRevisions,
];
