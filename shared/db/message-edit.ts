import { type StoredConversation, withEditedMessage } from '../conversations/state';
import { NotFoundError } from '../errors';
import type { Message } from '../schemas/message';
import { conversationLive } from './conversation-item';
import { mutate } from './conversation-mutate';
import { MessageChangedError, messages, type StoredMessage } from './messages';
import { ConcurrentChangeError, RetryBudget, transact } from './transaction';

export const messageEdits = {
  /**
   * Edits a message of `conversation` (as the caller read it, strongly, under its access rules):
   * the message is read strongly (404 when missing or deleted), `revise` gives it as edited or throws
   * the caller's refusal (not theirs, too late), and one transaction writes the edit, the prior
   * version, `message.updated` and the realtime notice (`messages.editWrites`). When the
   * conversation's preview shows this message it changes in the same transaction, on `rev`;
   * otherwise the transaction only requires the conversation to be live. Another edit, a read or a
   * deletion of the message meanwhile makes it read and revise again, within the request's retry
   * budget (then 503).
   */
  async edit(
    conversation: StoredConversation,
    messageId: string,
    revise: (current: StoredMessage) => Message,
    editedBy: string,
  ): Promise<Message> {
    const { organizationId: orgId, id: conversationId } = conversation;
    const budget = new RetryBudget();
    for (let attempt = 1; ; attempt++) {
      const current = await messages.get(orgId, conversationId, messageId);
      if (!current || current.deletedAt) throw new NotFoundError('Message not found');
      const edited = revise(current);
      const writes = messages.editWrites(current, edited, editedBy, conversation.visitorId);
      try {
        if (conversation.lastMessage?.id === current.id) {
          await mutate(
            orgId,
            conversationId,
            (latest) => ({ next: withEditedMessage(latest, edited), writes, result: undefined }),
            // The caller's read is the first attempt's state: no second read.
            attempt === 1 ? { initial: conversation, budget } : { budget },
          );
        } else {
          await transact([...writes, conversationLive(orgId, conversationId)]);
        }
        return edited;
      } catch (error) {
        const retryable = error instanceof ConcurrentChangeError || error instanceof MessageChangedError;
        if (retryable && (await budget.pause(attempt))) continue;
        throw error instanceof MessageChangedError ? new ConcurrentChangeError() : error;
      }
    }
  },
};
