import { clock } from '../../shared/clock';
import { actorOf } from '../../shared/conversations/actor';
import { conversationFieldRules } from '../../shared/custom-fields/conversation-fields';
import { presentField } from '../../shared/custom-fields/present';
import { customFields } from '../../shared/db/custom-fields';
import { NotFoundError } from '../../shared/errors';
import { ok, route } from '../../shared/http/route';
import { localeResolver } from '../../shared/locale/resolve';
import { customField, customFieldParams, updateCustomFieldBody } from '../../shared/schemas/custom-field';
import { createCustomFieldExample, customFieldExample } from '../../shared/schemas/examples';
import { assertValidParts, reviseFieldTranslations, reviseOptions, sameDefinition } from './definition';
import { RESOLUTION, WRITE_RULES } from './docs';

const [english, french] = createCustomFieldExample.translations;

export const updateCustomField = route({
  method: 'PATCH',
  path: '/api/custom-fields/{id}',
  operationId: 'updateCustomField',
  summary: 'Update a custom field',
  description: [
    'Writes only the fields present: `target`, `required`, `sortOrder`, `active`, `translations`, `options`. `name` and `type` are immutable (422 naming them): create another field instead.',
    '`translations` and `options` each replace the whole set: locales or options left out are removed. Options are matched to the stored ones by `value` and keep their id. Removing an option, deactivating (`active: false`) or retargeting a field does not rewrite values already stored on conversations: they stay as they are, and a conversation PATCH that sends them back unchanged is accepted; only new or changed values must fit the active definitions.',
    WRITE_RULES,
    `A body that changes nothing writes nothing and keeps \`updatedAt\`. The answer is resolved for the organization’s default locale. ${RESOLUTION}`,
  ].join('\n\n'),
  tag: 'Custom fields',
  scope: 'custom-fields:write',
  adminOnly: true,
  callers: ['apiKey', 'operator'],
  params: customFieldParams,
  body: updateCustomFieldBody,
  response: { status: 200, schema: customField, description: 'The definition after the change, resolved' },
  errors: [404, 409],
  examples: {
    // Grace has reviewed the machine translation.
    request: {
      translations: [...(english ? [english] : []), ...(french ? [{ ...french, reviewed: true }] : [])],
    },
    response: customFieldExample,
  },
  handle: async ({ caller, organization, params, body }) => {
    const context = { now: clock.nowIso(), reviewer: actorOf(caller).id };
    const stored = await customFields.update(caller.orgId, params.id, (current) => {
      assertValidParts(organization, current.type, body, false);
      const next = {
        ...current,
        ...(body.target !== undefined ? { target: body.target } : {}),
        ...(body.required !== undefined ? { required: body.required } : {}),
        ...(body.sortOrder !== undefined ? { sortOrder: body.sortOrder } : {}),
        ...(body.active !== undefined ? { active: body.active } : {}),
        ...(body.translations
          ? { translations: reviseFieldTranslations(current.translations, body.translations, context) }
          : {}),
        ...(body.options ? { options: reviseOptions(current.options, body.options, context) } : {}),
      };
      return sameDefinition(current, next) ? undefined : { ...next, updatedAt: context.now };
    });
    if (!stored) throw new NotFoundError('Custom field not found');
    conversationFieldRules.forget(caller.orgId);
    return ok(presentField(stored, localeResolver(organization, undefined)));
  },
});
