import { beforeAll, describe, expect, inject, it } from 'vitest';
import { allRoutes, apiTags } from '../../functions/routes';
import { buildOpenApi } from '../../shared/http/openapi';
import type { AnyRoute } from '../../shared/http/route';
import { call, createTenant, createVisitor, platformToken, type Tenant } from '../helpers/api';
import { channelIdForTest, fakeDiscordControl } from '../helpers/fake-discord';

/**
 * Every route's success answer is exercised: one realistic call per route, answered with the
 * status the route declares. What the answer holds is checked against the served OpenAPI document
 * by the check every integration test's answers go through.
 */
interface Sample {
  token?: string;
  headers?: Record<string, string>;
  path: string;
  body?: unknown;
}

let tenant: Tenant;
let samples: Map<string, Sample>;

beforeAll(async () => {
  tenant = await createTenant();
  const visitor = await createVisitor(tenant.widgetKey);
  const conversation = await call<{ id: string }>('POST', '/api/conversations', {
    token: tenant.apiKey,
    body: { visitorId: visitor.visitor.id, message: 'Hello' },
  });
  const conversationPath = `/api/conversations/${conversation.body.id}`;
  const posted = await call<{ id: string }>('POST', `${conversationPath}/messages`, {
    token: visitor.token,
    body: { content: 'Where is my parcel?' },
  });
  const messagePath = `${conversationPath}/messages/${posted.body.id}`;
  const note = await call<{ id: string }>('POST', `${conversationPath}/notes`, {
    token: tenant.operatorSession,
    body: { content: 'Customer prefers e-mail' },
  });
  const disposable = await call<{ id: string }>('POST', '/api/conversations', {
    token: tenant.apiKey,
    body: { visitorId: visitor.visitor.id },
  });
  const hookUrl = `http://127.0.0.1:${inject('webhookTestPorts')[3]}/schema-check`;
  const hook = await call<{ id: string }>('POST', '/api/webhooks', {
    token: tenant.apiKey,
    body: { url: hookUrl, events: ['note.created'] },
  });
  const hookPath = `/api/webhooks/${hook.body.id}`;
  const doomed = await call<{ id: string }>('POST', '/api/webhooks', {
    token: tenant.apiKey,
    body: { url: hookUrl, events: ['note.deleted'] },
  });
  const tested = await call<{ id: string }>('POST', `${hookPath}/test`, { token: tenant.apiKey });
  // Nothing listens on that port: after its two quick retries the delivery is failed, and retryable.
  for (let i = 0; i < 100; i++) {
    const history = await call<{ data: { id: string; status: string }[] }>('GET', `${hookPath}/deliveries`, {
      token: tenant.apiKey,
    });
    if (history.body.data.some((entry) => entry.id === tested.body.id && entry.status === 'failed')) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const fieldBody = (name: string) => ({
    name,
    type: 'select',
    translations: [{ locale: 'en', status: 'published', label: 'Issue type' }],
    options: [{ value: 'late', translations: [{ locale: 'en', status: 'published', label: 'Late' }] }],
  });
  const field = await call<{ id: string }>('POST', '/api/custom-fields', {
    token: tenant.apiKey,
    body: fieldBody('issueType'),
  });
  const fieldPath = `/api/custom-fields/${field.body.id}`;
  const doomedField = await call<{ id: string }>('POST', '/api/custom-fields', {
    token: tenant.apiKey,
    body: fieldBody('doomed'),
  });
  const kbCollectionBody = (key: string) => ({
    key,
    icon: 'truck',
    translations: [{ locale: 'en', status: 'published', name: 'Shipping', description: 'Parcels' }],
  });
  const kbCollection = await call<{ id: string }>('POST', '/api/kb/collections', {
    token: tenant.apiKey,
    body: kbCollectionBody('shipping'),
  });
  const kbCollectionPath = `/api/kb/collections/${kbCollection.body.id}`;
  const emptyCollection = await call<{ id: string }>('POST', '/api/kb/collections', {
    token: tenant.apiKey,
    body: kbCollectionBody('empty'),
  });
  const kbArticleBody = (slug: string) => ({
    collectionId: kbCollection.body.id,
    slug,
    status: 'published',
    translations: [
      { locale: 'en', status: 'published', title: 'Track your order', content: 'Follow the link.' },
    ],
  });
  const kbArticle = await call<{ id: string }>('POST', '/api/kb/articles', {
    token: tenant.apiKey,
    body: kbArticleBody('track-your-order'),
  });
  const kbArticlePath = `/api/kb/articles/${kbArticle.body.id}`;
  const doomedArticle = await call<{ id: string }>('POST', '/api/kb/articles', {
    token: tenant.apiKey,
    body: kbArticleBody('doomed'),
  });
  // A completed PDF job, for the job status sample (the shared stack's worker renders it).
  const pdfJob = await call<{ statusUrl: string }>('GET', `${conversationPath}/transcript?format=pdf`, {
    token: tenant.apiKey,
  });
  for (let i = 0; i < 100; i++) {
    const job = await call<{ status: string }>('GET', pdfJob.body.statusUrl, { token: tenant.apiKey });
    if (job.body.status === 'completed' || job.body.status === 'failed') break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const doomedSurvey = await call<{ id: string }>('POST', '/api/surveys', {
    token: visitor.token,
    body: { conversationId: disposable.body.id, score: 2 },
  });
  const admin = platformToken();
  const orgPath = `/api/admin/organizations/${tenant.orgId}`;
  const key = await call<{ id: string }>('POST', `${orgPath}/api-keys`, {
    token: admin,
    body: { name: 'to revoke' },
  });
  const team = await call<{ id: string }>('POST', '/api/operator-teams', {
    token: tenant.apiKey,
    body: { name: 'Deliveries', priority: 80 },
  });
  const teamPath = `/api/operator-teams/${team.body.id}`;
  await call('POST', `${teamPath}/members`, {
    token: tenant.apiKey,
    body: { operatorId: tenant.adminOperatorId },
  });
  const doomedTeam = await call<{ id: string }>('POST', '/api/operator-teams', {
    token: tenant.apiKey,
    body: { name: 'Doomed' },
  });
  const discord = fakeDiscordControl(inject('fakeDiscordUrl'));
  const [newChannel, doomedChannel] = [channelIdForTest(), channelIdForTest()];
  await discord.channel(newChannel);
  await discord.channel(doomedChannel);
  const doomedConfig = await call<{ id: string }>('POST', '/api/discord/channels', {
    token: tenant.apiKey,
    body: { channelId: doomedChannel, events: ['conversation_closed'] },
  });
  const providerBody = {
    name: 'Schema check',
    kind: 'openai-compatible',
    baseUrl: `${inject('fakeOpenAiUrl')}/v1`,
    model: 'schema-check',
  };
  const provider = await call<{ id: string }>('POST', '/api/admin/ai-providers', {
    token: admin,
    body: { ...providerBody, apiKey: 'sk-schema-check-0001' },
  });
  const doomedProvider = await call<{ id: string }>('POST', '/api/admin/ai-providers', {
    token: admin,
    body: providerBody,
  });
  const providerPath = `/api/admin/ai-providers/${provider.body.id}`;
  // An upload whose bytes are in storage, for its GET and its complete.
  const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(55, 0x20)]);
  const upload = await call<{ id: string; uploadUrl: string }>('POST', '/api/uploads', {
    token: tenant.apiKey,
    body: { filename: 'invoice.pdf', contentType: 'application/pdf', size: pdf.length },
  });
  await fetch(upload.body.uploadUrl, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/pdf' },
    body: pdf,
  });
  // The upsert's documented success is the update (200): the contact exists already.
  await call('PUT', '/api/visitors/by-external-id/crm-4711', { token: tenant.apiKey, body: {} });
  // A merge and an erasure each take visitors of their own.
  const [mergeTarget, mergeSource, erased] = await Promise.all([
    createVisitor(tenant.widgetKey),
    createVisitor(tenant.widgetKey),
    createVisitor(tenant.widgetKey),
  ]);
  samples = new Map<string, Sample>([
    ['GET /api/health', { path: '/api/health' }],
    [
      'POST /api/uploads',
      {
        token: tenant.apiKey,
        path: '/api/uploads',
        body: { filename: 'photo.png', contentType: 'image/png', size: 1024 },
      },
    ],
    ['GET /api/uploads/{id}', { token: tenant.apiKey, path: `/api/uploads/${upload.body.id}` }],
    [
      'POST /api/uploads/{id}/complete',
      { token: tenant.apiKey, path: `/api/uploads/${upload.body.id}/complete` },
    ],
    ['GET /api/openapi.json', { path: '/api/openapi.json' }],
    ['GET /api/docs', { path: '/api/docs' }],
    ['GET /api/docs/assets/{file}', { path: '/api/docs/assets/swagger-ui.css' }],
    [
      'POST /api/admin/organizations',
      { token: admin, path: '/api/admin/organizations', body: { name: 'Schema check' } },
    ],
    ['GET /api/admin/organizations/{orgId}', { token: admin, path: orgPath }],
    ['PATCH /api/admin/organizations/{orgId}', { token: admin, path: orgPath, body: { name: 'Renamed' } }],
    [
      'POST /api/admin/organizations/{orgId}/api-keys',
      { token: admin, path: `${orgPath}/api-keys`, body: { name: 'k', scopes: ['conversations:read'] } },
    ],
    [
      'DELETE /api/admin/organizations/{orgId}/api-keys/{keyId}',
      { token: admin, path: `${orgPath}/api-keys/${key.body.id}` },
    ],
    [
      'POST /api/admin/organizations/{orgId}/operators',
      {
        token: admin,
        path: `${orgPath}/operators`,
        body: { name: 'Ann', email: 'ann@example.com', role: 'operator' },
      },
    ],
    [
      'POST /api/admin/organizations/{orgId}/operators/{operatorId}/sessions',
      { token: admin, path: `${orgPath}/operators/${tenant.operatorId}/sessions` },
    ],
    [
      'POST /api/widget/visitors',
      {
        headers: { 'X-Widget-Key': tenant.widgetKey },
        path: '/api/widget/visitors',
        body: { identifier: 'x@example.com' },
      },
    ],
    ['GET /api/me', { token: tenant.apiKey, path: '/api/me' }],
    ['GET /api/audit-events', { token: tenant.apiKey, path: '/api/audit-events' }],
    ['GET /api/admin/audit-events', { token: admin, path: '/api/admin/audit-events' }],
    ['GET /api/usage', { token: tenant.apiKey, path: '/api/usage?granularity=month' }],
    ['GET /api/admin/organizations/{orgId}/usage', { token: admin, path: `${orgPath}/usage` }],
    ['GET /api/admin/usage/top', { token: admin, path: '/api/admin/usage/top?metric=apiRequests' }],
    ['GET /api/visitors', { token: tenant.apiKey, path: '/api/visitors' }],
    ['GET /api/visitors/{id}', { token: tenant.apiKey, path: `/api/visitors/${visitor.visitor.id}` }],
    [
      'PATCH /api/visitors/{id}',
      { token: tenant.apiKey, path: `/api/visitors/${visitor.visitor.id}`, body: { name: 'Ada Lovelace' } },
    ],
    [
      'POST /api/visitors/{id}/merge',
      {
        token: tenant.apiKey,
        path: `/api/visitors/${mergeTarget.visitor.id}/merge`,
        body: { sourceVisitorId: mergeSource.visitor.id },
      },
    ],
    ['DELETE /api/visitors/{id}', { token: tenant.apiKey, path: `/api/visitors/${erased.visitor.id}` }],
    [
      'PUT /api/visitors/by-external-id/{externalId}',
      { token: tenant.apiKey, path: '/api/visitors/by-external-id/crm-4711', body: { name: 'Grace Hopper' } },
    ],
    ['GET /api/webhooks', { token: tenant.apiKey, path: '/api/webhooks' }],
    [
      'POST /api/webhooks',
      {
        token: tenant.adminSession,
        path: '/api/webhooks',
        body: { url: hookUrl, events: ['message.created'] },
      },
    ],
    ['GET /api/webhooks/events', { token: tenant.apiKey, path: '/api/webhooks/events' }],
    [
      'PATCH /api/webhooks/{id}',
      { token: tenant.apiKey, path: hookPath, body: { events: ['note.created', 'note.deleted'] } },
    ],
    ['POST /api/webhooks/{id}/rotate-secret', { token: tenant.apiKey, path: `${hookPath}/rotate-secret` }],
    ['POST /api/webhooks/{id}/test', { token: tenant.apiKey, path: `${hookPath}/test` }],
    ['GET /api/webhooks/{id}/deliveries', { token: tenant.apiKey, path: `${hookPath}/deliveries` }],
    [
      'POST /api/webhooks/{id}/deliveries/{deliveryId}/retry',
      { token: tenant.apiKey, path: `${hookPath}/deliveries/${tested.body.id}/retry` },
    ],
    ['DELETE /api/webhooks/{id}', { token: tenant.apiKey, path: `/api/webhooks/${doomed.body.id}` }],
    ['GET /api/events', { token: tenant.apiKey, path: '/api/events?types=conversation.created' }],
    [
      'GET /api/custom-fields',
      { token: tenant.apiKey, path: '/api/custom-fields?locale=en&target=conversation' },
    ],
    [
      'POST /api/custom-fields',
      { token: tenant.adminSession, path: '/api/custom-fields', body: fieldBody('orderType') },
    ],
    ['GET /api/custom-fields/{id}', { token: tenant.operatorSession, path: `${fieldPath}?locale=en` }],
    [
      'PATCH /api/custom-fields/{id}',
      { token: tenant.apiKey, path: fieldPath, body: { required: true, sortOrder: 3 } },
    ],
    [
      'DELETE /api/custom-fields/{id}',
      { token: tenant.apiKey, path: `/api/custom-fields/${doomedField.body.id}` },
    ],
    [
      'GET /api/kb/collections',
      { token: tenant.operatorSession, path: '/api/kb/collections?locale=en&limit=5' },
    ],
    [
      'POST /api/kb/collections',
      { token: tenant.apiKey, path: '/api/kb/collections', body: kbCollectionBody('billing') },
    ],
    ['GET /api/kb/collections/{id}', { token: tenant.apiKey, path: `${kbCollectionPath}?locale=en` }],
    [
      'PATCH /api/kb/collections/{id}',
      { token: tenant.apiKey, path: kbCollectionPath, body: { sortOrder: 2, icon: 'box' } },
    ],
    [
      'DELETE /api/kb/collections/{id}',
      { token: tenant.apiKey, path: `/api/kb/collections/${emptyCollection.body.id}` },
    ],
    ['GET /api/kb/articles', { token: tenant.apiKey, path: '/api/kb/articles?q=track%20order&locale=en' }],
    [
      'POST /api/kb/articles',
      { token: tenant.operatorSession, path: '/api/kb/articles', body: kbArticleBody('reset-password') },
    ],
    ['GET /api/kb/articles/{id}', { token: tenant.apiKey, path: `${kbArticlePath}?locale=en` }],
    [
      'PATCH /api/kb/articles/{id}',
      { token: tenant.apiKey, path: kbArticlePath, body: { status: 'archived' } },
    ],
    [
      'DELETE /api/kb/articles/{id}',
      { token: tenant.apiKey, path: `/api/kb/articles/${doomedArticle.body.id}` },
    ],
    ['GET /api/conversations', { token: tenant.apiKey, path: '/api/conversations' }],
    [
      'GET /api/conversations/search',
      { token: tenant.apiKey, path: '/api/conversations/search?q=status%3Aopen' },
    ],
    [
      'POST /api/conversations',
      {
        token: tenant.operatorSession,
        path: '/api/conversations',
        body: { visitorId: visitor.visitor.id, tags: ['a'] },
      },
    ],
    ['GET /api/conversations/{id}', { token: visitor.token, path: conversationPath }],
    ['POST /api/conversations/{id}/read', { token: tenant.apiKey, path: `${conversationPath}/read` }],
    [
      'PATCH /api/conversations/{id}',
      { token: tenant.apiKey, path: conversationPath, body: { priority: 'high', tags: ['vip'] } },
    ],
    [
      'PATCH /api/conversations/{id}/locale',
      { token: visitor.token, path: `${conversationPath}/locale`, body: { locale: 'en' } },
    ],
    [
      'POST /api/conversations/{id}/snooze',
      {
        token: tenant.operatorSession,
        path: `${conversationPath}/snooze`,
        body: { until: '2099-01-01T00:00:00.000Z', reason: 'waiting' },
      },
    ],
    ['DELETE /api/conversations/{id}/snooze', { token: tenant.apiKey, path: `${conversationPath}/snooze` }],
    [
      'PUT /api/conversations/{id}/follow-up',
      {
        token: tenant.apiKey,
        path: `${conversationPath}/follow-up`,
        body: { remindAt: '2099-01-01T00:00:00.000Z', note: 'call back' },
      },
    ],
    [
      'DELETE /api/conversations/{id}/follow-up',
      { token: tenant.apiKey, path: `${conversationPath}/follow-up` },
    ],
    [
      'POST /api/conversations/bulk-close',
      {
        token: tenant.adminSession,
        path: '/api/conversations/bulk-close',
        body: { conversationIds: [disposable.body.id] },
      },
    ],
    [
      'POST /api/conversations/bulk-delete',
      {
        token: tenant.apiKey,
        path: '/api/conversations/bulk-delete',
        body: { conversationIds: [disposable.body.id] },
      },
    ],
    ['GET /api/conversations/{id}/notes', { token: tenant.apiKey, path: `${conversationPath}/notes` }],
    [
      'POST /api/conversations/{id}/notes',
      {
        token: tenant.adminSession,
        path: `${conversationPath}/notes`,
        body: { content: 'Refund approved', mentions: [tenant.operatorId] },
      },
    ],
    [
      'DELETE /api/conversations/{id}/notes/{noteId}',
      { token: tenant.operatorSession, path: `${conversationPath}/notes/${note.body.id}` },
    ],
    [
      'GET /api/conversations/{id}/assignment-history',
      { token: tenant.apiKey, path: `${conversationPath}/assignment-history` },
    ],
    ['GET /api/conversations/{id}/messages', { token: visitor.token, path: `${conversationPath}/messages` }],
    [
      'POST /api/conversations/{id}/messages',
      {
        token: tenant.operatorSession,
        path: `${conversationPath}/messages`,
        body: { content: 'On its way' },
      },
    ],
    [
      'PATCH /api/conversations/{id}/messages/unread-bulk',
      {
        token: tenant.apiKey,
        path: `${conversationPath}/messages/unread-bulk`,
        body: { messageIds: [posted.body.id] },
      },
    ],
    ['GET /api/conversations/{id}/messages/{messageId}', { token: tenant.apiKey, path: messagePath }],
    [
      'PATCH /api/conversations/{id}/messages/{messageId}',
      { token: visitor.token, path: messagePath, body: { content: 'Where is my order?' } },
    ],
    [
      'GET /api/conversations/{id}/messages/{messageId}/revisions',
      { token: tenant.apiKey, path: `${messagePath}/revisions` },
    ],
    ['GET /api/operator-teams', { token: tenant.operatorSession, path: '/api/operator-teams?limit=5' }],
    [
      'POST /api/operator-teams',
      {
        token: tenant.adminSession,
        path: '/api/operator-teams',
        body: { name: 'Billing', description: null },
      },
    ],
    ['GET /api/operator-teams/{id}', { token: tenant.apiKey, path: teamPath }],
    ['PATCH /api/operator-teams/{id}', { token: tenant.apiKey, path: teamPath, body: { priority: 90 } }],
    [
      'DELETE /api/operator-teams/{id}',
      { token: tenant.apiKey, path: `/api/operator-teams/${doomedTeam.body.id}` },
    ],
    [
      'POST /api/operator-teams/{id}/members',
      { token: tenant.adminSession, path: `${teamPath}/members`, body: { operatorId: tenant.operatorId } },
    ],
    [
      'DELETE /api/operator-teams/{id}/members/{operatorId}',
      { token: tenant.apiKey, path: `${teamPath}/members/${tenant.adminOperatorId}` },
    ],
    ['GET /api/operators', { token: tenant.apiKey, path: '/api/operators?role=operator' }],
    ['GET /api/export/conversations', { token: tenant.apiKey, path: '/api/export/conversations' }],
    [
      'POST /api/export/conversations/bulk',
      { token: tenant.operatorSession, path: '/api/export/conversations/bulk?status=open&redact_pii=true' },
    ],
    [
      'GET /api/conversations/{id}/transcript',
      { token: tenant.apiKey, path: `${conversationPath}/transcript?format=csv` },
    ],
    [
      'POST /api/conversations/{id}/transcript',
      { token: tenant.apiKey, path: `${conversationPath}/transcript`, body: { email: 'ada@example.com' } },
    ],
    ['GET /api/export/jobs/{jobId}', { token: tenant.apiKey, path: pdfJob.body.statusUrl }],
    ['GET /api/chatbot/config', { token: tenant.operatorSession, path: '/api/chatbot/config' }],
    [
      'PUT /api/chatbot/config',
      {
        token: tenant.adminSession,
        path: '/api/chatbot/config',
        body: {
          enabled: true,
          schedule: { timezone: 'Europe/Paris', days: [{ day: 'fri', from: '22:00', to: '02:00' }] },
          rules: [
            { name: 'Refunds', intent: 'billing', keywords: ['refund'], actions: ['answer_from_knowledge'] },
          ],
          intentPolicies: [{ intent: 'billing', handling: 'handoff', tag: 'billing', priority: 'high' }],
        },
      },
    ],
    [
      'POST /api/chatbot/simulate',
      {
        token: tenant.apiKey,
        path: '/api/chatbot/simulate',
        body: { message: 'How do I get a refund?', locale: 'en' },
      },
    ],
    [
      'POST /api/discord/channels',
      {
        token: tenant.apiKey,
        path: '/api/discord/channels',
        body: { channelId: newChannel, events: ['new_conversation'] },
      },
    ],
    ['GET /api/discord/channels', { token: tenant.operatorSession, path: '/api/discord/channels' }],
    [
      'DELETE /api/discord/channels/{id}',
      { token: tenant.apiKey, path: `/api/discord/channels/${doomedConfig.body.id}` },
    ],
    [
      'POST /api/admin/users/{id}/impersonate',
      { token: admin, path: `/api/admin/users/${tenant.operatorId}/impersonate` },
    ],
    [
      'POST /api/admin/users/stop-impersonation',
      { token: admin, path: '/api/admin/users/stop-impersonation' },
    ],
    ['POST /api/admin/ai-providers', { token: admin, path: '/api/admin/ai-providers', body: providerBody }],
    ['GET /api/admin/ai-providers', { token: admin, path: '/api/admin/ai-providers' }],
    ['GET /api/admin/ai-providers/{id}', { token: admin, path: providerPath }],
    [
      'PATCH /api/admin/ai-providers/{id}',
      { token: admin, path: providerPath, body: { model: 'schema-check', apiKey: '' } },
    ],
    [
      'DELETE /api/admin/ai-providers/{id}',
      { token: admin, path: `/api/admin/ai-providers/${doomedProvider.body.id}` },
    ],
    ['POST /api/admin/ai-providers/{id}/test', { token: admin, path: `${providerPath}/test` }],
    [
      'GET /api/surveys',
      { token: tenant.apiKey, path: `/api/surveys?conversationId=${conversation.body.id}&limit=5` },
    ],
    [
      'POST /api/surveys',
      {
        token: visitor.token,
        path: '/api/surveys',
        body: { conversationId: conversation.body.id, score: 5, comment: 'Great help' },
      },
    ],
    ['DELETE /api/surveys/{id}', { token: tenant.apiKey, path: `/api/surveys/${doomedSurvey.body.id}` }],
    ['GET /api/analytics/csat', { token: tenant.operatorSession, path: '/api/analytics/csat?period=90d' }],
    ['GET /api/export/analytics', { token: tenant.apiKey, path: '/api/export/analytics?format=csv' }],
  ]);
});

type Documented = {
  paths: Record<string, Record<string, { responses: Record<number, { headers?: Record<string, unknown> }> }>>;
};
const documented = buildOpenApi(allRoutes(), 'test', apiTags()) as unknown as Documented;

const routes = allRoutes().map((route) => [`${route.method} ${route.path}`, route] as const);

describe.each(routes)('%s', (name: string, route: AnyRoute) => {
  it('answers with its documented success status', async () => {
    const sample = samples.get(name);
    expect(sample, `no sample request for ${name}: add one here`).toBeDefined();
    if (!sample) return;
    // The body, the content type and the required headers are checked against the served document
    // on the way in (test/integration/response-conformance.setup.ts), as for every other answer.
    const response = await call(route.method, sample.path, {
      token: sample.token,
      headers: sample.headers,
      body: sample.body,
    });
    expect(response.status, response.text).toBe(route.response.status);
    // A client may read ETag as the version: it is sent exactly where the document declares it.
    const declared = Object.keys(
      documented.paths[route.path]?.[route.method.toLowerCase()]?.responses[route.response.status]?.headers ??
        {},
    );
    expect(response.headers.get('etag') !== null, 'ETag sent exactly when declared').toBe(
      declared.includes('ETag'),
    );
  });
});
