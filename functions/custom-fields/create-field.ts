import { clock } from '../../shared/clock';
import { actorOf } from '../../shared/conversations/actor';
import { conversationFieldRules } from '../../shared/custom-fields/conversation-fields';
import { presentField } from '../../shared/custom-fields/present';
import { customFields } from '../../shared/db/custom-fields';
import { created, route } from '../../shared/http/route';
import { uuidv7 } from '../../shared/ids';
import { localeResolver } from '../../shared/locale/resolve';
import { createCustomFieldBody, customField } from '../../shared/schemas/custom-field';
import { createCustomFieldExample, newCustomFieldExample } from '../../shared/schemas/examples';
import { assertValidParts, reviseFieldTranslations, reviseOptions } from './definition';
import { RESOLUTION, WRITE_RULES } from './docs';

export const createCustomField = route({
  method: 'POST',
  path: '/api/custom-fields',
  operationId: 'createCustomField',
  summary: 'Create a custom field',
  description: [
    '`name` is the key of the field’s value in `customFields`: an identifier (a letter, then letters, digits or underscores; at most 64), immutable, and unique in the organization whatever its case or target: a duplicate is 409 `CONFLICT` with `details.reason = "name_taken"`, also when two creates of one name race (one wins, the other is 409).',
    '`type` and `name` never change (PATCH refuses them). Defaults: `target` `conversation`, `required` false (a hint for forms: the API does not demand a value, conversations are created before anyone fills in a form), `sortOrder` 0, `active` true.',
    WRITE_RULES,
    `The answer is resolved for the organization’s default locale. ${RESOLUTION}`,
  ].join('\n\n'),
  tag: 'Custom fields',
  scope: 'custom-fields:write',
  adminOnly: true,
  callers: ['apiKey', 'operator'],
  body: createCustomFieldBody,
  response: { status: 201, schema: customField, description: 'The new definition, resolved' },
  examples: { request: createCustomFieldExample, response: newCustomFieldExample },
  handle: async ({ caller, organization, body }) => {
    assertValidParts(organization, body.type, body, true);
    const now = clock.nowIso();
    const context = { now, reviewer: actorOf(caller).id };
    const stored = await customFields.create({
      id: uuidv7(),
      orgId: caller.orgId,
      name: body.name,
      type: body.type,
      required: body.required ?? false,
      target: body.target ?? 'conversation',
      sortOrder: body.sortOrder ?? 0,
      active: body.active ?? true,
      options: reviseOptions([], body.options ?? [], context),
      translations: reviseFieldTranslations([], body.translations, context),
      createdAt: now,
      updatedAt: now,
    });
    conversationFieldRules.forget(caller.orgId);
    return created(presentField(stored, localeResolver(organization, undefined)));
  },
});
