import { conversationFieldRules } from '../../shared/custom-fields/conversation-fields';
import { CUSTOM_FIELD_VALUE_RULES } from '../../shared/custom-fields/values';
import { type ConversationAuthor, conversations } from '../../shared/db/conversations';
import { visitors } from '../../shared/db/visitors';
import { ValidationError } from '../../shared/errors';
import { etagOf } from '../../shared/http/if-match';
import { created, route } from '../../shared/http/route';
import { sanitizeText } from '../../shared/sanitize/text';
import { conversation, createConversationBody } from '../../shared/schemas/conversation';
import { ids, newConversationExample } from '../../shared/schemas/examples';

export const createConversation = route({
  method: 'POST',
  path: '/api/conversations',
  operationId: 'createConversation',
  summary: 'Start a conversation',
  description: `Visitors start their own conversation (source \`widget\`); API keys and operators name the visitor with \`visitorId\` (source \`api\`). The optional \`message\` becomes the first message: an operator session writes it as the operator (and is assigned the conversation), a visitor or an API key as the visitor. Content is sanitized to text.\n\n\`customFields\`: ${CUSTOM_FIELD_VALUE_RULES}`,
  tag: 'Conversations',
  scope: 'conversations:write',
  callers: ['apiKey', 'operator', 'visitor'],
  body: createConversationBody,
  versioned: 'read',
  response: { status: 201, schema: conversation, description: 'The new conversation' },
  examples: {
    request: { visitorId: ids.visitor, message: 'Hello, my order is late', tags: ['orders'] },
    response: newConversationExample,
  },
  handle: async ({ caller, body }) => {
    let visitorId = body.visitorId;
    if (caller.kind === 'visitor') {
      if (visitorId !== undefined && visitorId !== caller.visitorId) {
        throw ValidationError.field('visitorId', 'Visitors can only start conversations for themselves');
      }
      visitorId = caller.visitorId;
    }
    if (visitorId === undefined) throw ValidationError.field('visitorId', 'visitorId is required');
    // Beside the visitor's read (one round trip for both); its 422 waits until the visitor's.
    const fieldsChecked = conversationFieldRules.check(caller.orgId, body.customFields ?? {});
    fieldsChecked.catch(() => undefined);
    const visitor = await visitors.get(caller.orgId, visitorId);
    if (!visitor) throw ValidationError.field('visitorId', 'No such visitor in this organization');
    await fieldsChecked;
    if (body.message !== undefined && sanitizeText(body.message) === '') {
      throw ValidationError.field('message', 'The message has no text once sanitized');
    }
    const author: ConversationAuthor =
      caller.kind === 'visitor'
        ? { kind: 'visitor', visitorId: caller.visitorId }
        : caller.kind === 'operator'
          ? { kind: 'operator', operatorId: caller.operatorId }
          : { kind: 'apiKey' };
    const started = await conversations.create(caller.orgId, author, visitor, body);
    return created(started, { ETag: etagOf(started.version) });
  },
});
