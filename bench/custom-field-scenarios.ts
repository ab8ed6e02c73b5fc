import type { FixtureContext } from './conversation-scenarios';
import { fixtureApiKey, stringAt } from './fixtures';
import type { Scenario } from './round-trips';

const label = (text: string) => [{ locale: 'en', status: 'published', label: text }];

/**
 * Scenarios for the custom-field routes, and for the conversation writes that check values
 * against the definitions. A get is one GetItem, a list one Query; a conversation write with
 * `customFields` reads the definitions beside the conversation (cold: one Query in the same trip
 * as the conversation's read; warm: none, the instance's cache accepts). Fixtures (fields to
 * change or delete, a conversation to change) are made by a fixture API key of the demo
 * organization, never by the measured one.
 */
export async function customFieldScenarios(
  context: Omit<FixtureContext, 'conversationId' | 'nowMs'>,
): Promise<Scenario[]> {
  const { demo, request } = context;
  const apiKey = demo.apiKey;
  const fixtureKey = await fixtureApiKey(context, 'custom-field');
  let sequence = 0;
  const fieldBody = (base: string) => ({
    name: `${base}${++sequence}_${Date.now().toString(36)}`,
    type: 'select',
    translations: label('Issue type'),
    options: [
      { value: 'late', translations: label('Late delivery') },
      { value: 'damaged', translations: label('Damaged parcel') },
    ],
  });
  const createField = async (base: string): Promise<{ id: string; name: string }> => {
    const body = fieldBody(base);
    const created = await request(
      { method: 'POST', path: '/api/custom-fields', token: fixtureKey, body },
      201,
      'create a custom field',
    );
    return { id: stringAt(created, 'id'), name: body.name };
  };

  const issue = await createField('benchIssue');
  const changed = await createField('benchChanged');
  const conversationId = stringAt(
    await request(
      {
        method: 'POST',
        path: '/api/conversations',
        token: fixtureKey,
        body: { visitorId: demo.visitorId, customFields: { [issue.name]: 'late' } },
      },
      201,
      'create a conversation with custom fields',
    ),
    'id',
  );
  let nextSortOrder = 0;
  let nextIssue = 0;
  const issues = ['damaged', 'late'];

  return [
    {
      route: 'GET /api/custom-fields',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: '/api/custom-fields?target=conversation', token: apiKey }),
    },
    {
      route: 'POST /api/custom-fields',
      caller: 'apiKey',
      expectedStatus: 201,
      call: () => ({
        method: 'POST',
        path: '/api/custom-fields',
        token: apiKey,
        body: fieldBody('benchNew'),
      }),
    },
    {
      route: 'GET /api/custom-fields/{id}',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: `/api/custom-fields/${issue.id}?locale=en`, token: apiKey }),
    },
    {
      route: 'PATCH /api/custom-fields/{id}',
      caller: 'apiKey',
      expectedStatus: 200,
      // A real change every time: the order moves.
      call: () => ({
        method: 'PATCH',
        path: `/api/custom-fields/${changed.id}`,
        token: apiKey,
        body: { sortOrder: ++nextSortOrder },
      }),
    },
    {
      route: 'DELETE /api/custom-fields/{id}',
      caller: 'apiKey',
      expectedStatus: 200,
      call: async () => ({
        method: 'DELETE',
        path: `/api/custom-fields/${(await createField('benchDoomed')).id}`,
        token: apiKey,
      }),
    },
    {
      route: 'POST /api/conversations',
      variant: 'customFields',
      caller: 'apiKey',
      expectedStatus: 201,
      call: () => ({
        method: 'POST',
        path: '/api/conversations',
        token: apiKey,
        body: { visitorId: demo.visitorId, customFields: { [issue.name]: 'damaged' } },
      }),
    },
    {
      route: 'PATCH /api/conversations/{id}',
      variant: 'customFields',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'transaction',
      call: () => ({
        method: 'PATCH',
        path: `/api/conversations/${conversationId}`,
        token: apiKey,
        body: { customFields: { [issue.name]: issues[nextIssue++ % issues.length] } },
      }),
    },
  ];
}
