import { createConversation } from './create-conversation';
import { getConversation } from './get-conversation';
import { listConversations } from './list-conversations';

export const conversationRoutes = [listConversations, createConversation, getConversation];
