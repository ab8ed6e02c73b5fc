import { authCache } from '../../shared/auth/authenticate';
import { changedChatbotConfig, replacementOf } from '../../shared/chatbot/config';
import { clock } from '../../shared/clock';
import { auditActorOf } from '../../shared/db/org-audit';
import { organizations } from '../../shared/db/organizations';
import { ForbiddenError } from '../../shared/errors';
import { ok, route } from '../../shared/http/route';
import { chatbotConfig, putChatbotConfigBody } from '../../shared/schemas/chatbot';

const configExample = {
  enabled: true,
  schedule: {
    timezone: 'Europe/Paris',
    days: [
      { day: 'mon' as const, from: '09:00', to: '18:00' },
      { day: 'fri' as const, from: '22:00', to: '02:00' },
    ],
  },
  knowledgeThreshold: 0.35,
  rules: [
    {
      id: '019a7c21-0c00-7a11-8b22-3c33d44e5501',
      name: 'Refunds',
      intent: 'billing',
      keywords: ['refund', 'remboursement'],
      actions: ['answer_from_knowledge'],
    },
  ],
  intentPolicies: [
    { intent: 'billing', handling: 'handoff' as const, tag: 'billing', priority: 'high' as const },
  ],
  updatedAt: '2026-11-21T10:00:00.000Z',
};

const unavailable = () => new ForbiddenError('The organization is unavailable');

export const getChatbotConfig = route({
  method: 'GET',
  path: '/api/chatbot/config',
  operationId: 'getChatbotConfig',
  summary: "The organization's chatbot configuration",
  description:
    'The same settings the platform admin sees in the organization record (`chatbot`). A new organization has the bot off, no schedule (always), `knowledgeThreshold` 0.35 and no rules or intent policies of its own.',
  tag: 'Chatbot',
  scope: 'chatbot:read',
  callers: ['apiKey', 'operator'],
  response: { status: 200, schema: chatbotConfig, description: 'The configuration' },
  examples: { response: configExample },
  handle: async ({ caller }) => {
    // Strongly consistent: a configuration saved a moment ago reads back as saved.
    const found = await organizations.get(caller.orgId, { consistent: true });
    if (!found) throw unavailable();
    return ok(found.chatbot);
  },
});

export const putChatbotConfig = route({
  method: 'PUT',
  path: '/api/chatbot/config',
  operationId: 'putChatbotConfig',
  summary: "Replace the organization's chatbot configuration",
  description: `The whole configuration: an omitted field takes its default (\`enabled\` false, \`schedule\` null, \`knowledgeThreshold\` 0.35, no rules, no intent policies). Rules apply in order (at most 100; a rule without \`id\` gets one); one intent policy per intent. A schedule day whose \`to\` is earlier than its \`from\` runs past midnight. The configuration may take at most 64 KiB as JSON (422 \`details.reason = "config_too_large"\`). Instances that already hold the organization in their 10 s authentication cache may simulate with the previous configuration for that long.`,
  tag: 'Chatbot',
  scope: 'chatbot:write',
  adminOnly: true,
  callers: ['apiKey', 'operator'],
  body: putChatbotConfigBody,
  response: { status: 200, schema: chatbotConfig, description: 'The configuration as saved' },
  examples: {
    request: {
      enabled: configExample.enabled,
      schedule: configExample.schedule,
      knowledgeThreshold: configExample.knowledgeThreshold,
      rules: configExample.rules,
      intentPolicies: configExample.intentPolicies,
    },
    response: configExample,
  },
  handle: async ({ caller, organization, body }) => {
    const next = changedChatbotConfig(organization.chatbot, replacementOf(body), clock.nowIso());
    const updated = await organizations.setChatbot(caller.orgId, next, auditActorOf(caller));
    if (!updated) throw unavailable();
    // This instance simulates with the new configuration at once; others within the cache's 10 s.
    authCache.replaceOrganization(updated);
    return ok(updated.chatbot);
  },
});
