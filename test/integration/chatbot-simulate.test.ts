import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { WebSocket } from 'ws';
import { call, createApiKey, createTenant, createVisitor, platformToken, type Tenant } from '../helpers/api';
import { receivedCompletions } from '../helpers/fake-openai';

/** `POST /api/chatbot/simulate`: every outcome reached through the HTTP API, no model ever called. */
interface Simulation {
  outcome: string;
  intent: string;
  consumesAiCredit: boolean;
  rule: { id: string; name: string; intent: string; actions: string[] };
  intentPolicy: { intent: string; handling: string; tag: string; priority: string };
  knowledge: {
    confidence: number;
    threshold: number;
    sufficient: boolean;
    articles: { articleId: string; title: string; slug: string; score: number }[];
  };
  gates: {
    chatbotEnabled: boolean;
    withinSchedule: boolean;
    operatorAvailable: boolean;
    aiFeatureEnabled: boolean;
    providerAvailable: boolean;
  };
}
interface ErrorBody {
  error: { code: string; details?: { field?: string; reason?: string; requiredScope?: string } };
}

const simulate = (token: string, message: string, locale = 'en') =>
  call<Simulation & ErrorBody>('POST', '/api/chatbot/simulate', { token, body: { message, locale } });

async function putConfig(tenant: Tenant, config: Record<string, unknown>): Promise<void> {
  const saved = await call('PUT', '/api/chatbot/config', { token: tenant.apiKey, body: config });
  if (saved.status !== 200) throw new Error(`put config: ${saved.status} ${saved.text}`);
}

let sequence = 0;
const unique = (base: string) => `${base}-${++sequence}-${Date.now().toString(36)}`;

async function publish(
  tenant: Tenant,
  translations: { locale: string; title: string; content: string }[],
  status = 'published',
): Promise<{ id: string; slug: string }> {
  const collection = await call<{ id: string }>('POST', '/api/kb/collections', {
    token: tenant.apiKey,
    body: { key: unique('help'), translations: [{ locale: 'en', status: 'published', name: 'Help' }] },
  });
  if (collection.status !== 201) throw new Error(`collection: ${collection.status} ${collection.text}`);
  const slug = unique('article');
  const article = await call<{ id: string }>('POST', '/api/kb/articles', {
    token: tenant.apiKey,
    body: {
      collectionId: collection.body.id,
      slug,
      status,
      translations: translations.map((translation) => ({ ...translation, status: 'published' })),
    },
  });
  if (article.status !== 201) throw new Error(`article: ${article.status} ${article.text}`);
  return { id: article.body.id, slug };
}

/** An operator's realtime connection, as the operator console holds it. */
async function connectOperator(token: string): Promise<WebSocket> {
  const url = `${inject('baseUrl').replace(/^http/, 'ws')}/realtime?token=${encodeURIComponent(token)}`;
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_request, response) =>
      reject(new Error(`refused with ${response.statusCode}`)),
    );
  });
  return ws;
}

const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
/** A whole day, three days from today (UTC): the bot is never within it now. */
const anotherDay = () => ({
  timezone: 'UTC',
  days: [{ day: DAYS[(new Date().getUTCDay() + 3) % 7], from: '00:00', to: '23:59' }],
});

const refunds = {
  name: 'Refunds',
  intent: 'billing',
  keywords: ['refund'],
  actions: ['answer_from_knowledge'],
};
const humans = { name: 'Humans', intent: 'human', keywords: ['agent'], actions: ['handoff'] };
const policies = [{ intent: 'human', handling: 'handoff', tag: 'escalation', priority: 'urgent' }];

let tenant: Tenant;
let other: Tenant;
let aiTenant: Tenant;
let providerId = '';
const model = `simulate-${crypto.randomUUID()}`;
const sockets: WebSocket[] = [];

beforeAll(async () => {
  [tenant, other, aiTenant] = await Promise.all([
    createTenant(),
    createTenant(),
    createTenant({ modules: ['automation_api', 'ai_assistant'] }),
  ]);
  const provider = await call<{ id: string }>('POST', '/api/admin/ai-providers', {
    token: platformToken(),
    body: {
      name: 'Simulation gateway',
      kind: 'openai-compatible',
      baseUrl: `${inject('fakeOpenAiUrl')}/v1`,
      model,
      apiKey: 'sk-simulation-test-key',
    },
  });
  if (provider.status !== 201) throw new Error(`provider: ${provider.status} ${provider.text}`);
  providerId = provider.body.id;
});

afterAll(async () => {
  for (const socket of sockets) socket.close();
  if (providerId) await call('DELETE', `/api/admin/ai-providers/${providerId}`, { token: platformToken() });
});

describe('POST /api/chatbot/simulate', () => {
  it('is disabled while the bot is off, with the default rule, policy and every gate', async () => {
    const response = await simulate(tenant.apiKey, 'Hello there');

    expect(response.status, response.text).toBe(200);
    expect(response.body).toEqual({
      outcome: 'disabled',
      intent: 'general',
      consumesAiCredit: false,
      rule: {
        id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
        name: 'Default',
        intent: 'general',
        actions: ['answer_from_knowledge'],
      },
      intentPolicy: { intent: 'general', handling: 'answer', tag: 'general', priority: 'low' },
      knowledge: { confidence: 0, threshold: 0.35, sufficient: false, articles: [] },
      gates: {
        chatbotEnabled: false,
        withinSchedule: true,
        operatorAvailable: false,
        aiFeatureEnabled: false,
        providerAvailable: true,
      },
    });
  });

  it("keeps the default rule's id for the organization, and gives another organization another", async () => {
    const first = await simulate(tenant.apiKey, 'Hello');
    const again = await simulate(tenant.operatorSession, 'Something else');
    const elsewhere = await simulate(other.apiKey, 'Hello');

    expect(again.body.rule.id).toBe(first.body.rule.id);
    expect(elsewhere.body.rule.id).not.toBe(first.body.rule.id);
  });

  it('is outside_schedule when now is not a scheduled time', async () => {
    await putConfig(tenant, {
      enabled: true,
      schedule: anotherDay(),
      rules: [humans],
      intentPolicies: policies,
    });

    const response = await simulate(tenant.apiKey, 'An agent please');

    expect(response.body).toMatchObject({
      outcome: 'outside_schedule',
      intent: 'human',
      gates: { chatbotEnabled: true, withinSchedule: false },
    });
  });

  it('hands off when the intent policy says so, with the matched rule and its policy', async () => {
    await putConfig(tenant, { enabled: true, rules: [refunds, humans], intentPolicies: policies });

    const response = await simulate(tenant.apiKey, 'Can I talk to an AGENT?');

    expect(response.status, response.text).toBe(200);
    expect(response.body).toMatchObject({
      outcome: 'handoff',
      intent: 'human',
      consumesAiCredit: false,
      rule: { name: 'Humans', intent: 'human', actions: ['handoff'] },
      intentPolicy: policies[0],
      gates: { chatbotEnabled: true, withinSchedule: true, operatorAvailable: false },
    });
    expect(response.body.rule).not.toHaveProperty('keywords');
  });

  it('falls back to the message with no knowledge, no AI feature and no operator', async () => {
    const response = await simulate(tenant.apiKey, 'Do you sell umbrellas?');

    expect(response.body).toMatchObject({
      outcome: 'fallback_message',
      intent: 'general',
      consumesAiCredit: false,
      gates: { operatorAvailable: false, aiFeatureEnabled: false },
    });
  });

  it('answers from knowledge: the best three published articles, best first, sufficient at the threshold', async () => {
    const refund = await publish(tenant, [
      {
        locale: 'en',
        title: 'Refunds',
        content: 'A refund reaches your account within five days of the parcel coming back to us.',
      },
    ]);
    const returns = await publish(tenant, [
      {
        locale: 'en',
        title: 'Returning a parcel',
        content: 'Print the label; the refund follows the return.',
      },
    ]);
    await publish(
      tenant,
      [{ locale: 'en', title: 'Refund drafts', content: 'refund refund refund' }],
      'draft',
    );
    await publish(tenant, [{ locale: 'en', title: 'Opening hours', content: 'We answer from 9 to 5.' }]);

    const response = await simulate(tenant.apiKey, 'When does my refund reach my account?');

    expect(response.status, response.text).toBe(200);
    const { knowledge } = response.body;
    expect(response.body).toMatchObject({
      outcome: 'knowledge_answer',
      intent: 'billing',
      consumesAiCredit: false,
    });
    expect(knowledge.articles.map((article) => article.articleId)).toEqual([refund.id, returns.id]);
    expect(knowledge.articles[0]).toEqual({
      articleId: refund.id,
      title: 'Refunds',
      slug: refund.slug,
      score: knowledge.confidence,
    });
    expect(knowledge.confidence).toBeGreaterThanOrEqual(0.35);
    expect(knowledge.confidence).toBeLessThanOrEqual(1);
    expect(knowledge.articles[1]?.score).toBeGreaterThan(0);
    expect(knowledge.articles[1]?.score).toBeLessThan(knowledge.confidence);
    expect(knowledge).toMatchObject({ threshold: 0.35, sufficient: true });
  });

  it('keeps at most three articles, and is not sufficient below a higher threshold', async () => {
    for (const n of [1, 2, 3]) {
      await publish(tenant, [
        { locale: 'en', title: `Courier ${n}`, content: `The courier comes on day ${n}.` },
      ]);
    }
    await putConfig(tenant, {
      enabled: true,
      knowledgeThreshold: 1,
      rules: [refunds],
      intentPolicies: policies,
    });

    const response = await simulate(tenant.apiKey, 'When does the courier come? And my refund?');

    expect(response.body.knowledge.articles).toHaveLength(3);
    const scores = response.body.knowledge.articles.map((article) => article.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(response.body.knowledge).toMatchObject({ threshold: 1, sufficient: false });
    expect(response.body.outcome).toBe('fallback_message');
  });

  it("hands off to an operator connected to the realtime channel, the organization's own only", async () => {
    sockets.push(await connectOperator(tenant.operatorSession));
    await putConfig(other, { enabled: true });

    const response = await simulate(tenant.apiKey, 'Do you sell umbrellas?');
    const elsewhere = await simulate(other.apiKey, 'Do you sell umbrellas?');

    expect(response.body).toMatchObject({
      outcome: 'handoff',
      intent: 'general',
      intentPolicy: { handling: 'answer' },
      gates: { operatorAvailable: true },
    });
    expect(elsewhere.body).toMatchObject({
      outcome: 'fallback_message',
      gates: { operatorAvailable: false },
    });
    // Another organization's articles are not its knowledge.
    const refundsElsewhere = await simulate(other.apiKey, 'When does my refund reach my account?');
    expect(refundsElsewhere.body.knowledge).toEqual({
      confidence: 0,
      threshold: 0.35,
      sufficient: false,
      articles: [],
    });
  });

  it('answers with the AI when the organization has ai_assistant and a provider is enabled, calling no model', async () => {
    await putConfig(aiTenant, { enabled: true });
    sockets.push(await connectOperator(aiTenant.operatorSession));

    const response = await simulate(aiTenant.apiKey, 'Do you sell umbrellas?');

    expect(response.status, response.text).toBe(200);
    expect(response.body).toMatchObject({
      outcome: 'ai_answer',
      consumesAiCredit: true,
      gates: {
        chatbotEnabled: true,
        withinSchedule: true,
        operatorAvailable: true,
        aiFeatureEnabled: true,
        providerAvailable: true,
      },
    });
    expect(await receivedCompletions(inject('fakeOpenAiUrl'), model)).toEqual([]);
  });

  it('refuses a locale the organization has not enabled, and reads articles in an enabled one', async () => {
    const refused = await simulate(aiTenant.apiKey, 'Bonjour', 'fr');
    const patched = await call('PATCH', `/api/admin/organizations/${aiTenant.orgId}`, {
      token: platformToken(),
      body: { locales: ['en', 'fr'] },
    });
    const article = await publish(aiTenant, [
      { locale: 'en', title: 'Refunds', content: 'Your refund arrives within five days.' },
      { locale: 'fr', title: 'Remboursements', content: 'Votre remboursement arrive sous cinq jours.' },
    ]);
    const french = await simulate(aiTenant.apiKey, 'Mon remboursement arrive quand ?', 'fr');

    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { field: 'locale', reason: 'locale_not_enabled' },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(french.status, french.text).toBe(200);
    expect(french.body.knowledge.articles[0]).toMatchObject({
      articleId: article.id,
      title: 'Remboursements',
    });
    expect(french.body.outcome).toBe('knowledge_answer');
  });

  it('refuses an empty or missing message', async () => {
    expect((await simulate(tenant.apiKey, '   ')).status).toBe(422);
    const missing = await call('POST', '/api/chatbot/simulate', {
      token: tenant.apiKey,
      body: { locale: 'en' },
    });
    expect(missing.status).toBe(422);
  });

  it('needs chatbot:read from a key, admits any operator, and refuses visitors', async () => {
    const reader = await createApiKey(tenant.orgId, ['chatbot:read']);
    const stranger = await createApiKey(tenant.orgId, ['integrations:read']);
    const visitor = await createVisitor(tenant.widgetKey);

    expect((await simulate(reader.key, 'Hello')).status).toBe(200);
    expect((await simulate(tenant.operatorSession, 'Hello')).status).toBe(200);
    const refused = await simulate(stranger.key, 'Hello');
    expect(refused.status).toBe(403);
    expect(refused.body.error.details?.requiredScope).toBe('chatbot:read');
    expect((await simulate(visitor.token, 'Hello')).status).toBe(403);
    expect((await simulate(platformToken(), 'Hello')).status).toBe(403);
  });
});
