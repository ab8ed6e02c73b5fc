import type { FixtureContext } from './conversation-scenarios';
import { fixtureApiKey, stringAt } from './fixtures';
import type { Scenario } from './round-trips';

/**
 * Scenarios for the exports group. A conversation export is a count (Select=COUNT on the listing's
 * index entries, the partitions in parallel) ∥ one Query of the operators, then per chunk of 50
 * index entries one BatchGetItem and one Query per conversation's messages (read ahead, 8 at a
 * time): its trips grow with the conversations it writes, its bytes with their messages. A CSV
 * transcript is the conversation's GetItem, the operators' Query, then its message pages; a PDF
 * request adds the job's PutItem (and the SQS send); the job status is one GetItem. Fixtures (a
 * PDF job to read back) are made by a fixture API key of the demo organization.
 */
export async function exportScenarios(context: Omit<FixtureContext, 'nowMs'>): Promise<Scenario[]> {
  const { demo, request, conversationId } = context;
  const apiKey = demo.apiKey;
  const fixtureKey = await fixtureApiKey(context, 'export');
  const transcript = `/api/conversations/${conversationId}/transcript`;
  const job = await request(
    { method: 'GET', path: `${transcript}?format=pdf`, token: fixtureKey },
    202,
    'queue a PDF transcript',
  );
  const jobPath = stringAt(job, 'statusUrl');

  return [
    {
      route: 'GET /api/export/conversations',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'stream',
      call: () => ({ method: 'GET', path: '/api/export/conversations', token: apiKey }),
    },
    {
      route: 'GET /api/export/conversations',
      variant: 'csv, redact_pii',
      caller: 'operator',
      expectedStatus: 200,
      target: 'stream',
      call: () => ({
        method: 'GET',
        path: '/api/export/conversations?format=csv&redact_pii=true',
        token: demo.adminSession,
      }),
    },
    {
      route: 'POST /api/export/conversations/bulk',
      variant: 'status=open',
      caller: 'apiKey',
      expectedStatus: 200,
      target: 'stream',
      call: () => ({ method: 'POST', path: '/api/export/conversations/bulk?status=open', token: apiKey }),
    },
    {
      route: 'GET /api/conversations/{id}/transcript',
      variant: 'csv',
      target: 'childRead',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: transcript, token: apiKey }),
    },
    {
      route: 'GET /api/conversations/{id}/transcript',
      variant: 'pdf (202 job)',
      target: 'job',
      caller: 'apiKey',
      expectedStatus: 202,
      call: () => ({ method: 'GET', path: `${transcript}?format=pdf`, token: apiKey }),
    },
    {
      route: 'POST /api/conversations/{id}/transcript',
      // The per-organization e-mail rate (issue 9: no spam cannon) is counted on every send.
      target: 'ownLimit',
      caller: 'apiKey',
      expectedStatus: 202,
      call: () => ({ method: 'POST', path: transcript, token: apiKey, body: { email: 'bench@example.com' } }),
    },
    {
      route: 'GET /api/export/jobs/{jobId}',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: jobPath, token: apiKey }),
    },
  ];
}
