import { bulkClose, bulkDelete } from './bulk';
import {
  clearFollowUp,
  getAssignmentHistory,
  setFollowUp,
  setLocale,
  snooze,
  unsnooze,
} from './conversation-state';
import { createConversation } from './create-conversation';
import { editMessage, listRevisions } from './edit-message';
import { getConversation } from './get-conversation';
import { listConversations } from './list-conversations';
import { createNote, deleteNote, listNotes } from './notes';
import { postMessage } from './post-message';
import { getMessage, listMessages } from './read-messages';
import { markRead, markUnread } from './read-state';
import { updateConversation } from './update-conversation';

export const conversationRoutes = [
  listConversations,
  createConversation,
  bulkClose,
  bulkDelete,
  getConversation,
  updateConversation,
  setLocale,
  snooze,
  unsnooze,
  setFollowUp,
  clearFollowUp,
  getAssignmentHistory,
  markRead,
  listMessages,
  postMessage,
  markUnread,
  getMessage,
  editMessage,
  listRevisions,
  listNotes,
  createNote,
  deleteNote,
];
