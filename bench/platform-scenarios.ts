import { channelIdForTest, fakeDiscordControl } from '../test/helpers/fake-discord';
import type { FixtureContext } from './conversation-scenarios';
import { fixtureApiKey, stringAt } from './fixtures';
import type { Scenario } from './round-trips';

/** What the platform scenarios need beyond the conversation fixtures' context. */
export interface PlatformFixtureContext extends Omit<FixtureContext, 'conversationId' | 'nowMs'> {
  /** The local gateway, for the one fixture whose answer matters beyond its body (a cookie). */
  baseUrl: string;
  /** The fake Discord API the stack's DISCORD_API_BASE_URL points at. */
  fakeDiscordUrl: string;
  /** The fake OpenAI-compatible API, admitted by AI_PROVIDER_ALLOWED_TARGETS. */
  fakeOpenAiUrl: string;
}

/**
 * Scenarios for the chatbot configuration, Discord channels, impersonation and AI providers.
 * Fixtures (channels to delete, providers to delete, a session to stop) are made unmeasured, by a
 * fixture API key of the demo organization or the platform token. Discord and the AI provider are
 * the local fakes: their HTTP exchanges are not DynamoDB round trips, and are not counted.
 */
export async function platformScenarios(context: PlatformFixtureContext): Promise<Scenario[]> {
  const { demo, platform, request } = context;
  const apiKey = demo.apiKey;
  const fixtureKey = await fixtureApiKey(context, 'discord');
  const discord = fakeDiscordControl(context.fakeDiscordUrl);

  const registeredChannel = async (): Promise<string> => {
    const channelId = channelIdForTest();
    await discord.channel(channelId, { name: 'bench-alerts' });
    return channelId;
  };
  const addChannel = async (): Promise<string> =>
    stringAt(
      await request(
        {
          method: 'POST',
          path: '/api/discord/channels',
          token: fixtureKey,
          body: { channelId: await registeredChannel(), events: ['conversation_closed'] },
        },
        201,
        'add a Discord channel',
      ),
      'id',
    );
  const providerBody = () => ({
    name: 'Bench gateway',
    kind: 'openai-compatible',
    baseUrl: `${context.fakeOpenAiUrl}/v1`,
    model: 'bench-model',
    apiKey: `sk-bench-${crypto.randomUUID()}`,
  });
  const addProvider = async (): Promise<string> =>
    stringAt(
      await request(
        { method: 'POST', path: '/api/admin/ai-providers', token: platform, body: providerBody() },
        201,
        'add an AI provider',
      ),
      'id',
    );
  /** An impersonation session, as the cookie the platform admin's browser would hold. */
  const impersonationCookie = async (): Promise<string> => {
    const response = await fetch(`${context.baseUrl}/api/admin/users/${demo.adminOperatorId}/impersonate`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${platform}` },
    });
    const cookie = response.headers.get('set-cookie')?.split(';')[0];
    if (response.status !== 200 || !cookie) throw new Error(`impersonate: ${response.status}`);
    return cookie;
  };

  const provider = await addProvider();
  let impersonatedToken = '';
  let enabled = false;

  return [
    {
      route: 'GET /api/chatbot/config',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: '/api/chatbot/config', token: apiKey }),
    },
    {
      route: 'PUT /api/chatbot/config',
      caller: 'apiKey',
      expectedStatus: 200,
      // A real change every time: the bot goes on and off.
      call: () => {
        enabled = !enabled;
        return {
          method: 'PUT',
          path: '/api/chatbot/config',
          token: apiKey,
          body: {
            enabled,
            rules: [
              {
                name: 'Refunds',
                intent: 'billing',
                keywords: ['refund'],
                actions: ['answer_from_knowledge'],
              },
            ],
            intentPolicies: [{ intent: 'billing', handling: 'handoff', tag: 'billing', priority: 'high' }],
          },
        };
      },
    },
    {
      // The configuration and modules come with authentication; the published articles, operator
      // presence and (cold only: 10 s instance cache) the providers are read in parallel.
      route: 'POST /api/chatbot/simulate',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({
        method: 'POST',
        path: '/api/chatbot/simulate',
        token: apiKey,
        body: { message: 'How do I get a refund?', locale: 'en' },
      }),
    },
    {
      route: 'POST /api/discord/channels',
      caller: 'apiKey',
      expectedStatus: 201,
      call: async () => ({
        method: 'POST',
        path: '/api/discord/channels',
        token: apiKey,
        body: { channelId: await registeredChannel(), events: ['conversation_closed'] },
      }),
    },
    {
      route: 'GET /api/discord/channels',
      caller: 'apiKey',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: '/api/discord/channels', token: apiKey }),
    },
    {
      route: 'DELETE /api/discord/channels/{id}',
      caller: 'apiKey',
      expectedStatus: 200,
      call: async () => ({
        method: 'DELETE',
        path: `/api/discord/channels/${await addChannel()}`,
        token: apiKey,
      }),
    },
    {
      route: 'POST /api/admin/users/{id}/impersonate',
      caller: 'platform',
      expectedStatus: 200,
      call: () => ({
        method: 'POST',
        path: `/api/admin/users/${demo.adminOperatorId}/impersonate`,
        token: platform,
      }),
    },
    {
      route: 'POST /api/admin/users/stop-impersonation',
      caller: 'platform',
      expectedStatus: 200,
      call: async () => ({
        method: 'POST',
        path: '/api/admin/users/stop-impersonation',
        token: platform,
        headers: { Cookie: await impersonationCookie() },
      }),
    },
    {
      // Every request of an impersonation session: authenticated afresh (never cached) and audited.
      route: 'GET /api/me',
      variant: 'impersonated',
      caller: 'operator',
      target: 'uncached',
      expectedStatus: 200,
      // One session for both attempts (minted just before the cold one: the bench's clock runs fast).
      call: async (attempt) => {
        if (attempt === 'cold')
          impersonatedToken = (await impersonationCookie()).slice('svc_impersonation='.length);
        return { method: 'GET', path: '/api/me', token: impersonatedToken };
      },
    },
    {
      route: 'POST /api/admin/ai-providers',
      caller: 'platform',
      expectedStatus: 201,
      call: () => ({
        method: 'POST',
        path: '/api/admin/ai-providers',
        token: platform,
        body: providerBody(),
      }),
    },
    {
      route: 'GET /api/admin/ai-providers',
      caller: 'platform',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: '/api/admin/ai-providers', token: platform }),
    },
    {
      route: 'GET /api/admin/ai-providers/{id}',
      caller: 'platform',
      expectedStatus: 200,
      call: () => ({ method: 'GET', path: `/api/admin/ai-providers/${provider}`, token: platform }),
    },
    {
      route: 'PATCH /api/admin/ai-providers/{id}',
      caller: 'platform',
      expectedStatus: 200,
      call: () => ({
        method: 'PATCH',
        path: `/api/admin/ai-providers/${provider}`,
        token: platform,
        body: { model: `bench-model-${Date.now()}`, apiKey: '' },
      }),
    },
    {
      route: 'DELETE /api/admin/ai-providers/{id}',
      caller: 'platform',
      expectedStatus: 200,
      call: async () => ({
        method: 'DELETE',
        path: `/api/admin/ai-providers/${await addProvider()}`,
        token: platform,
      }),
    },
    {
      route: 'POST /api/admin/ai-providers/{id}/test',
      caller: 'platform',
      expectedStatus: 200,
      call: () => ({ method: 'POST', path: `/api/admin/ai-providers/${provider}/test`, token: platform }),
    },
  ];
}
