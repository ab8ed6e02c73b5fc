import type { FixtureContext } from './conversation-scenarios';
import { fixtureApiKey, stringAt } from './fixtures';
import type { Scenario } from './round-trips';

/** What the webhook scenarios need beyond the conversation fixtures' context. */
export interface WebhookFixtureContext extends Omit<FixtureContext, 'conversationId' | 'nowMs'> {
  /**
   * An allow-listed target (WEBHOOK_ALLOWED_TARGETS) where nothing listens: every attempt fails at
   * once (connection refused), so deliveries end `failed` after the short retry schedule.
   */
  deadTarget: string;
}

const FAILED_WAIT_MS = 20_000;

/**
 * Scenarios for the webhook routes. Fixtures (webhooks to change, rotate, test or delete, failed
 * deliveries to retry) are made by a fixture API key of the demo organization, never by the
 * measured one. Webhooks point at `deadTarget` and subscribe to `note.deleted` only, so the other
 * scenarios cause few deliveries; the ones they do cause fail fast, in the background workers.
 */
export async function webhookScenarios(context: WebhookFixtureContext): Promise<Scenario[]> {
  const { demo, request, deadTarget } = context;
  const apiKey = demo.apiKey;
  const fixtureKey = await fixtureApiKey(context, 'webhook');
  let sequence = 0;
  const hookBody = () => ({ url: `${deadTarget}/${++sequence}`, events: ['note.deleted'] });
  const createWebhook = async (): Promise<string> =>
    stringAt(
      await request(
        { method: 'POST', path: '/api/webhooks', token: fixtureKey, body: hookBody() },
        201,
        'register a webhook',
      ),
      'id',
    );
  const at = (id: string, suffix = '') => `/api/webhooks/${id}${suffix}`;

  const changed = await createWebhook();
  const rotated = await createWebhook();
  const tested = await createWebhook();
  // Failed deliveries to retry (cold, warm, and a spare should the warm request be repeated), and
  // a delivery history to list: test events to a target where nothing listens.
  const failing = await createWebhook();
  const retries = 3;
  for (let i = 0; i < retries; i++)
    await request(
      { method: 'POST', path: at(failing, '/test'), token: fixtureKey },
      202,
      'send a test event',
    );
  type Listed = { data?: { id?: string; status?: string }[] };
  const deadline = Date.now() + FAILED_WAIT_MS;
  let failed: string[] = [];
  for (;;) {
    const page = (await request(
      { method: 'GET', path: at(failing, '/deliveries'), token: fixtureKey },
      200,
      'list deliveries',
    )) as Listed;
    failed = (page.data ?? []).filter((d) => d.status === 'failed').map((d) => d.id ?? '');
    if (failed.length >= retries) break;
    if (Date.now() > deadline)
      throw new Error(
        `webhook fixtures: ${failed.length}/${retries} test deliveries failed within ${FAILED_WAIT_MS / 1000} s (statuses: ${(page.data ?? []).map((d) => d.status).join(', ')})`,
      );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  let nextFailed = 0;
  const eventsCycle = [['note.deleted', 'note.created'], ['note.deleted']];
  let nextEvents = 0;

  return [
    {
      route: 'GET /api/webhooks',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: '/api/webhooks', token: apiKey }),
    },
    {
      route: 'POST /api/webhooks',
      caller: 'apiKey',
      expectedStatus: 201,
      call: () => ({ method: 'POST', path: '/api/webhooks', token: apiKey, body: hookBody() }),
    },
    {
      route: 'GET /api/webhooks/events',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: '/api/webhooks/events', token: apiKey }),
    },
    {
      route: 'PATCH /api/webhooks/{id}',
      caller: 'apiKey',
      expectedStatus: 200,
      // A real change every time: the subscription alternates.
      call: () => ({
        method: 'PATCH',
        path: at(changed),
        token: apiKey,
        body: { events: eventsCycle[nextEvents++ % eventsCycle.length] },
      }),
    },
    {
      route: 'DELETE /api/webhooks/{id}',
      caller: 'apiKey',
      expectedStatus: 200,
      call: async () => ({ method: 'DELETE', path: at(await createWebhook()), token: apiKey }),
    },
    {
      route: 'POST /api/webhooks/{id}/rotate-secret',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'POST', path: at(rotated, '/rotate-secret'), token: apiKey }),
    },
    {
      route: 'POST /api/webhooks/{id}/test',
      caller: 'apiKey',
      expectedStatus: 202,
      call: () => ({ method: 'POST', path: at(tested, '/test'), token: apiKey }),
    },
    {
      route: 'GET /api/webhooks/{id}/deliveries',
      target: 'childRead',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: at(failing, '/deliveries'), token: apiKey }),
    },
    {
      route: 'POST /api/webhooks/{id}/deliveries/{deliveryId}/retry',
      variant: 'failed delivery',
      caller: 'apiKey',
      expectedStatus: 202,
      call: () => {
        const deliveryId = failed[nextFailed++];
        if (!deliveryId) throw new Error('no failed delivery left to retry');
        return { method: 'POST', path: at(failing, `/deliveries/${deliveryId}/retry`), token: apiKey };
      },
    },
  ];
}
