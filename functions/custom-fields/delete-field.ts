import { conversationFieldRules } from '../../shared/custom-fields/conversation-fields';
import { customFields } from '../../shared/db/custom-fields';
import { auditActorOf } from '../../shared/db/org-audit';
import { NotFoundError } from '../../shared/errors';
import { ok, route } from '../../shared/http/route';
import { successResult } from '../../shared/schemas/common';
import { customFieldParams } from '../../shared/schemas/custom-field';

export const deleteCustomField = route({
  method: 'DELETE',
  path: '/api/custom-fields/{id}',
  operationId: 'deleteCustomField',
  summary: 'Delete a custom field',
  description:
    'Permanent: the definition goes with its translations and options, and its `name` can be used again. Values already stored under that name on conversations are not rewritten: they stay as they are (a conversation PATCH that sends them back unchanged is accepted), but no new value can be written under the name until a field of that name exists again.',
  tag: 'Custom fields',
  scope: 'custom-fields:write',
  adminOnly: true,
  callers: ['apiKey', 'operator'],
  params: customFieldParams,
  response: { status: 200, schema: successResult, description: 'Deleted' },
  errors: [404],
  examples: { response: { success: true } },
  handle: async ({ caller, params }) => {
    if (!(await customFields.remove(caller.orgId, params.id, auditActorOf(caller))))
      throw new NotFoundError('Custom field not found');
    conversationFieldRules.forget(caller.orgId);
    return ok({ success: true });
  },
});
