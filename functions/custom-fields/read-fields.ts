import { fieldOrder, presentField } from '../../shared/custom-fields/present';
import { customFields } from '../../shared/db/custom-fields';
import { NotFoundError } from '../../shared/errors';
import { ok, route } from '../../shared/http/route';
import { localeResolver } from '../../shared/locale/resolve';
import {
  customField,
  customFieldList,
  customFieldParams,
  getCustomFieldQuery,
  listCustomFieldsQuery,
} from '../../shared/schemas/custom-field';
import { customFieldExample } from '../../shared/schemas/examples';
import { RESOLUTION } from './docs';

export const listCustomFields = route({
  method: 'GET',
  path: '/api/custom-fields',
  operationId: 'listCustomFields',
  summary: 'List custom fields',
  description: `Every definition of the organization, active or not (\`target\` narrows to one target), ordered by \`sortOrder\`, then \`name\`: one page, no pagination (the definitions of an organization are bounded, see creation). ${RESOLUTION}`,
  tag: 'Custom fields',
  scope: 'custom-fields:read',
  callers: ['apiKey', 'operator'],
  query: listCustomFieldsQuery,
  response: { status: 200, schema: customFieldList, description: 'The definitions, resolved' },
  examples: { response: { data: [customFieldExample] } },
  handle: async ({ caller, organization, query }) => {
    // The locale is checked before anything is read: 422 costs no round trip.
    const resolver = localeResolver(organization, query.locale);
    const definitions = await customFields.all(caller.orgId, { consistent: true });
    const data = definitions
      .filter((definition) => query.target === undefined || definition.target === query.target)
      .sort(fieldOrder)
      .map((definition) => presentField(definition, resolver));
    return ok({ data });
  },
});

export const getCustomField = route({
  method: 'GET',
  path: '/api/custom-fields/{id}',
  operationId: 'getCustomField',
  summary: 'Get a custom field',
  description: `One definition, resolved for \`locale\`. An id of another organization is 404. ${RESOLUTION}`,
  tag: 'Custom fields',
  scope: 'custom-fields:read',
  callers: ['apiKey', 'operator'],
  params: customFieldParams,
  query: getCustomFieldQuery,
  response: { status: 200, schema: customField, description: 'The definition, resolved' },
  errors: [404],
  examples: { response: customFieldExample },
  handle: async ({ caller, organization, params, query }) => {
    const resolver = localeResolver(organization, query.locale);
    const definition = await customFields.get(caller.orgId, params.id);
    if (!definition) throw new NotFoundError('Custom field not found');
    return ok(presentField(definition, resolver));
  },
});
