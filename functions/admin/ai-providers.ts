import { probeProvider } from '../../shared/ai-providers/probe';
import { config, configDefaults } from '../../shared/config';
import { aiProviders } from '../../shared/db/ai-providers';
import { auditActorOf } from '../../shared/db/org-audit';
import { NotFoundError } from '../../shared/errors';
import { created, ok, route } from '../../shared/http/route';
import {
  type AiProvider,
  aiProvider,
  aiProviderList,
  aiProviderListQuery,
  aiProviderParams,
  aiProviderTestResult,
  createAiProviderBody,
  updateAiProviderBody,
} from '../../shared/schemas/ai-provider';
import { pageOf, successResult } from '../../shared/schemas/common';
import { examplePage } from '../../shared/schemas/examples';

const providerExample: AiProvider = {
  id: '019a7c22-3d00-7b11-8c22-4d33e44f5601',
  name: 'Acme GPT gateway',
  kind: 'openai-compatible',
  baseUrl: 'https://llm.acme.example/v1',
  model: 'gpt-4o-mini',
  enabled: true,
  hasApiKey: true,
  apiKeyLast4: 'x9Qz',
  createdAt: '2026-11-01T08:20:00.000Z',
  updatedAt: '2026-11-01T08:20:00.000Z',
};

const KEY_RULES =
  'The API key is stored encrypted (AWS KMS; AES-256-GCM locally) and never returned: `hasApiKey` and `apiKeyLast4` (its last four characters, shown for keys of 8 characters or more) tell which one is stored.';

const notFound = () => new NotFoundError('AI provider not found');

export const createAiProvider = route({
  method: 'POST',
  path: '/api/admin/ai-providers',
  operationId: 'createAiProvider',
  summary: 'Add an AI provider',
  description: `A platform-wide, OpenAI-compatible provider (\`kind: "openai-compatible"\`); \`enabled\` defaults to true. ${KEY_RULES}`,
  tag: 'AI providers',
  callers: ['platform'],
  body: createAiProviderBody,
  response: { status: 201, schema: aiProvider, description: 'The provider (without its key)' },
  examples: {
    request: {
      name: providerExample.name,
      kind: 'openai-compatible',
      baseUrl: providerExample.baseUrl,
      model: providerExample.model,
      apiKey: 'sk-live-5f2c9a7e1b3d4x9Qz',
    },
    response: providerExample,
  },
  handle: async ({ caller, body }) =>
    created(
      await aiProviders.create(
        {
          name: body.name,
          kind: body.kind,
          baseUrl: body.baseUrl,
          model: body.model,
          enabled: body.enabled ?? true,
          apiKey: body.apiKey ?? undefined,
        },
        auditActorOf(caller),
      ),
    ),
});

export const listAiProviders = route({
  method: 'GET',
  path: '/api/admin/ai-providers',
  operationId: 'listAiProviders',
  summary: 'List AI providers',
  description: `Offset page (\`offset\` 0, \`limit\` 20 by default, at most 100), oldest first. ${KEY_RULES}`,
  tag: 'AI providers',
  callers: ['platform'],
  query: aiProviderListQuery,
  response: { status: 200, schema: aiProviderList, description: 'A page of providers' },
  examples: { response: examplePage(providerExample) },
  handle: async ({ query }) =>
    ok(pageOf(await aiProviders.all({ consistent: true }), query.offset, query.limit)),
});

export const getAiProvider = route({
  method: 'GET',
  path: '/api/admin/ai-providers/{id}',
  operationId: 'getAiProvider',
  summary: 'Get an AI provider',
  description: KEY_RULES,
  tag: 'AI providers',
  callers: ['platform'],
  params: aiProviderParams,
  response: { status: 200, schema: aiProvider, description: 'The provider (without its key)' },
  errors: [404],
  examples: { response: providerExample },
  handle: async ({ params }) => {
    const found = await aiProviders.get(params.id);
    if (!found) throw notFound();
    return ok(aiProviders.toProvider(found));
  },
});

export const updateAiProvider = route({
  method: 'PATCH',
  path: '/api/admin/ai-providers/{id}',
  operationId: 'updateAiProvider',
  summary: 'Update an AI provider',
  description: `Writes only the fields present. An omitted, empty or null \`apiKey\` keeps the stored key. ${KEY_RULES}`,
  tag: 'AI providers',
  callers: ['platform'],
  params: aiProviderParams,
  body: updateAiProviderBody,
  response: { status: 200, schema: aiProvider, description: 'The provider after the change' },
  errors: [404],
  examples: {
    request: { model: 'gpt-4.1-mini', apiKey: '' },
    response: { ...providerExample, model: 'gpt-4.1-mini', updatedAt: '2026-11-21T11:00:00.000Z' },
  },
  handle: async ({ caller, params, body }) => {
    const updated = await aiProviders.update(
      params.id,
      {
        name: body.name,
        kind: body.kind,
        baseUrl: body.baseUrl,
        model: body.model,
        enabled: body.enabled,
        apiKey: body.apiKey ?? undefined,
      },
      auditActorOf(caller),
    );
    if (!updated) throw notFound();
    return ok(updated);
  },
});

export const deleteAiProvider = route({
  method: 'DELETE',
  path: '/api/admin/ai-providers/{id}',
  operationId: 'deleteAiProvider',
  summary: 'Delete an AI provider',
  description: 'Permanent, and idempotent: deleting a provider that does not exist is still a success.',
  tag: 'AI providers',
  callers: ['platform'],
  params: aiProviderParams,
  response: { status: 200, schema: successResult, description: 'Deleted (or already absent)' },
  examples: { response: { success: true } },
  handle: async ({ caller, params }) => {
    await aiProviders.remove(params.id, auditActorOf(caller));
    return ok({ success: true });
  },
});

export const testAiProvider = route({
  method: 'POST',
  path: '/api/admin/ai-providers/{id}/test',
  operationId: 'testAiProvider',
  summary: 'Test an AI provider',
  description: `Sends one short probe, \`POST {baseUrl}/chat/completions\` with \`{ model, messages: [{ role: "user", content }], max_tokens }\` and the stored key as \`Authorization: Bearer\`, and answers how it went: \`reply\` is the first choice's content cut to 200 characters, \`latencyMs\` the whole exchange. An upstream error, a refused target or a timeout (\`AI_PROVIDER_PROBE_TIMEOUT_MS\`, default ${configDefaults.aiProviderProbeTimeoutMs / 1000} s) is still 200, with \`success: false\` and \`error\`. The target must be \`https\` and resolve only to public addresses (checked again at connect time); redirects are not followed. \`AI_PROVIDER_ALLOWED_TARGETS\` admits development targets (\`host:port\`, or a bare host for any port), over http too.`,
  tag: 'AI providers',
  callers: ['platform'],
  params: aiProviderParams,
  response: { status: 200, schema: aiProviderTestResult, description: 'What the probe found' },
  errors: [404],
  examples: { response: { success: true, reply: 'pong', latencyMs: 412 } },
  handle: async ({ params }) => {
    const found = await aiProviders.get(params.id);
    if (!found) throw notFound();
    const outcome = await probeProvider(
      { baseUrl: found.baseUrl, model: found.model, apiKey: await aiProviders.openKey(found) },
      { allowList: config.aiProviderAllowedTargets, timeoutMs: config.aiProviderProbeTimeoutMs },
    );
    return ok(outcome);
  },
});
