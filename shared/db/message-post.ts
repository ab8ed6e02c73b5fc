import type { StoredConversation } from '../conversations/state';
import { ValidationError } from '../errors';
import type { Message } from '../schemas/message';
import { appendMessage } from './conversation-append';
import { messages } from './messages';
import { operators } from './operators';
import type { Write } from './transaction';
import { uploads } from './uploads';

/** What the request says beyond the message itself, for the checks that ride in its transaction. */
export interface PostFacts {
  /** Access rules, checked against every state read (404/403). */
  check?: (conversation: StoredConversation) => void;
  /** The operator an API key names as the sender: it must exist (422 `operatorId`). */
  namedSenderId?: string | undefined;
  /** The mentioned operators as the request lists them, repeats included (422 `mentions.<i>`). */
  mentioned?: readonly string[] | undefined;
  /** Who may attach the message's uploads (`ownerOf`): see `uploads.claimWrites`. */
  uploadOwner: string;
}

export const messagePosts = {
  /**
   * A message post by the append protocol (conversation-append.ts). `draft` builds the message from
   * the state read, once (a retry keeps its id and time). Its transaction also holds what the message
   * names: the reply-to message must be one of the conversation's (422 `replyToId`), the operators
   * named must exist, and each attachment's upload is claimed for it (422 `attachmentIds.<i>`), so
   * two posts naming one upload cannot both commit.
   */
  post(
    orgId: string,
    conversationId: string,
    draft: (current: StoredConversation) => Message,
    facts: PostFacts,
  ): Promise<Message> {
    return appendMessage(
      orgId,
      conversationId,
      (current) => {
        const message = draft(current);
        const writes = [
          ...replyToCheck(orgId, message),
          ...uploads.claimWrites(
            orgId,
            message.attachments.map((attachment) => attachment.id),
            facts.uploadOwner,
            { conversationId: current.id, messageId: message.id },
          ),
        ];
        return { message, writes, result: message };
      },
      { ...(facts.check ? { check: facts.check } : {}), verify: () => mustBeOperators(orgId, facts) },
    );
  },
};

function replyToCheck(orgId: string, message: Message): Write[] {
  if (!message.replyToId) return [];
  return [
    messages.existsCheck(orgId, message.conversationId, message.replyToId, () =>
      ValidationError.field('replyToId', 'replyToId must be a message of this conversation'),
    ),
  ];
}

/**
 * The operators the request names must exist (422 under the first field that named each: the sender
 * an API key names, then the mentions in request order): read before the post, not a condition of
 * its transaction (`operators.missing`).
 */
async function mustBeOperators(orgId: string, facts: PostFacts): Promise<void> {
  const fields = new Map<string, string>();
  if (facts.namedSenderId) fields.set(facts.namedSenderId, 'operatorId');
  (facts.mentioned ?? []).forEach((operatorId, i) => {
    if (!fields.has(operatorId)) fields.set(operatorId, `mentions.${i}`);
  });
  const missing = await operators.missing(orgId, [...fields.keys()]);
  for (const [operatorId, field] of fields) {
    if (!missing.has(operatorId)) continue;
    throw ValidationError.field(
      field,
      field === 'operatorId'
        ? 'No such operator in this organization'
        : 'Mentions must be operators of this organization',
    );
  }
}
