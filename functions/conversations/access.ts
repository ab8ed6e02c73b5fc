import type { OrgCaller } from '../../shared/auth/caller';
import { clock } from '../../shared/clock';
import {
  conversations,
  conversationWithMessage,
  type StoredConversation,
} from '../../shared/db/conversations';
import type { Message } from '../../shared/db/messages';
import { ForbiddenError, NotFoundError } from '../../shared/errors';
import type { Organization } from '../../shared/schemas/organization';

const DAY_MS = 86_400_000;

/** The oldest `lastMessageAt` the organization still shows, or undefined for unlimited history. */
export function historyCutoff(organization: Organization): string | undefined {
  if (organization.historyWindowDays === null) return undefined;
  return new Date(clock.nowMs() - organization.historyWindowDays * DAY_MS).toISOString();
}

/**
 * Every conversation-scoped endpoint applies these rules to the state it reads: another visitor's
 * conversation is simply missing (404; other organizations' and soft-deleted ones never load), and
 * a conversation older than the history window is 403 with its reason.
 */
export function accessRules(caller: OrgCaller, organization: Organization) {
  return (conversation: StoredConversation): void => {
    if (caller.kind === 'visitor' && conversation.visitorId !== caller.visitorId) {
      throw new NotFoundError('Conversation not found');
    }
    const cutoff = historyCutoff(organization);
    const days = organization.historyWindowDays;
    if (cutoff && days !== null && conversation.lastMessageAt < cutoff) {
      throw new ForbiddenError('This conversation is outside the organization history window', {
        reason: 'outside_history_window',
        historyWindowDays: days,
      });
    }
  };
}

/**
 * Reads a conversation and one of its messages in one request, then applies the access rules to the
 * conversation; the message is undefined when the conversation has no such message.
 */
export async function loadConversationWith(
  caller: OrgCaller,
  organization: Organization,
  id: string,
  messageId: string,
): Promise<{ conversation: StoredConversation; message: Message | undefined }> {
  const { conversation, message } = await conversationWithMessage(caller.orgId, id, messageId);
  if (!conversation) throw new NotFoundError('Conversation not found');
  accessRules(caller, organization)(conversation);
  return { conversation, message };
}

/** Reads a conversation for a caller: one GetItem, then the access rules. */
export async function loadConversation(
  caller: OrgCaller,
  organization: Organization,
  id: string,
): Promise<StoredConversation> {
  const found = await conversations.get(caller.orgId, id);
  if (!found) throw new NotFoundError('Conversation not found');
  accessRules(caller, organization)(found);
  return found;
}
