import { config } from '../../shared/config';
import { auditActorOf } from '../../shared/db/org-audit';
import { allWebhooks, webhooks } from '../../shared/db/webhooks';
import { NotFoundError, ValidationError } from '../../shared/errors';
import { created, ok, route } from '../../shared/http/route';
import { pageOf, successResult } from '../../shared/schemas/common';
import { examplePage, webhookExample } from '../../shared/schemas/examples';
import {
  createdWebhook,
  createWebhookBody,
  eventCatalog,
  updateWebhookBody,
  webhook,
  webhookList,
  webhookListQuery,
  webhookParams,
} from '../../shared/schemas/webhook';
import * as z from '../../shared/schemas/zod';
import { generateSecret, isValidSecret } from '../../shared/webhooks/signing';
import type { TargetCheck } from '../../shared/webhooks/targets';

/**
 * The target check and its address classifier (ipaddr.js), loaded by the first create or update:
 * the function's other routes never need them, so its cold start does not pay for them.
 */
let targetCheck: Promise<(url: string) => Promise<TargetCheck>> | undefined;
function loadTargetCheck() {
  targetCheck ??= import('../../shared/webhooks/targets').then(({ checkTarget, parseAllowedTargets }) => {
    const allowed = parseAllowedTargets(config.webhookAllowedTargets);
    return (url: string) => checkTarget(url, { allowed });
  });
  return targetCheck;
}

/** HTTPS, and every address the host resolves to public (or an allow-listed development target). */
async function checkedUrl(url: string): Promise<string> {
  const checked = await (await loadTargetCheck())(url);
  if (!checked.ok) {
    throw ValidationError.field('url', 'The URL must be HTTPS and resolve only to public addresses', {
      reason: checked.reason,
    });
  }
  return checked.url.toString();
}

const TARGET_RULES =
  'The URL must be `https` and every address its host resolves to public (no loopback, private, link-local, CGNAT, multicast, metadata, IPv4-mapped or unique-local IPv6); the same check runs again when each delivery connects, and redirects are never followed. `WEBHOOK_ALLOWED_TARGETS` (host:port pairs) admits development targets, over http too.';

export const createWebhook = route({
  method: 'POST',
  path: '/api/webhooks',
  operationId: 'createWebhook',
  summary: 'Register a webhook',
  description: `${TARGET_RULES} Without \`secret\` a Standard Webhooks secret (\`whsec_…\`) is generated and returned once, in \`secret\`; a supplied secret must have that form and is never echoed. Secrets are stored encrypted.`,
  tag: 'Webhooks',
  scope: 'webhooks:write',
  adminOnly: true,
  callers: ['apiKey', 'operator'],
  body: createWebhookBody,
  response: {
    status: 201,
    schema: createdWebhook,
    description: 'The webhook (with the generated secret, if any)',
  },
  examples: {
    request: { url: webhookExample.url, events: webhookExample.events },
    response: { ...webhookExample, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw2IS9kB5U0Ss=' },
  },
  handle: async ({ caller, body }) => {
    if (body.secret !== undefined && !isValidSecret(body.secret)) {
      throw ValidationError.field(
        'secret',
        'A secret is "whsec_" followed by the base64 of at least 24 bytes',
      );
    }
    const url = await checkedUrl(body.url);
    const secret = body.secret ?? generateSecret();
    const registered = await webhooks.create(
      caller.orgId,
      { url, events: body.events, secret },
      auditActorOf(caller),
    );
    return created(body.secret === undefined ? { ...registered, secret } : registered);
  },
});

export const listWebhooks = route({
  method: 'GET',
  path: '/api/webhooks',
  operationId: 'listWebhooks',
  summary: 'List webhooks',
  description: 'Offset page (`offset` 0, `limit` 20 by default, at most 100). Secrets are never listed.',
  tag: 'Webhooks',
  scope: 'webhooks:read',
  callers: ['apiKey', 'operator'],
  query: webhookListQuery,
  response: { status: 200, schema: webhookList, description: 'A page of webhooks' },
  examples: { response: examplePage(webhookExample) },
  handle: async ({ caller, query }) => {
    const all = (await allWebhooks(caller.orgId)).map(webhooks.toWebhook);
    return ok(pageOf(all, query.offset, query.limit));
  },
});

export const listWebhookEvents = route({
  method: 'GET',
  path: '/api/webhooks/events',
  operationId: 'listWebhookEvents',
  summary: 'Subscribable events',
  tag: 'Webhooks',
  scope: 'webhooks:read',
  callers: ['apiKey', 'operator'],
  response: {
    status: 200,
    schema: z.object({ events: z.array(z.object({ event: z.string(), description: z.string() })) }),
    description: 'The event catalog',
  },
  examples: {
    response: { events: [{ event: 'conversation.created', description: 'A conversation was started' }] },
  },
  handle: async () => ok({ events: [...eventCatalog] }),
});

export const updateWebhook = route({
  method: 'PATCH',
  path: '/api/webhooks/{id}',
  operationId: 'updateWebhook',
  summary: 'Update a webhook',
  description: `Any of \`url\`, \`events\`, \`active\`. ${TARGET_RULES}`,
  tag: 'Webhooks',
  scope: 'webhooks:write',
  adminOnly: true,
  callers: ['apiKey', 'operator'],
  params: webhookParams,
  body: updateWebhookBody,
  response: { status: 200, schema: webhook, description: 'The webhook after the change' },
  errors: [404],
  examples: {
    request: { events: ['conversation.created', 'message.created'], active: true },
    response: webhookExample,
  },
  handle: async ({ caller, params, body }) => {
    const url = body.url === undefined ? undefined : await checkedUrl(body.url);
    const updated = await webhooks.update(
      caller.orgId,
      params.id,
      {
        url,
        events: body.events ? [...new Set(body.events)] : undefined,
        active: body.active,
      },
      auditActorOf(caller),
    );
    if (!updated) throw new NotFoundError('Webhook not found');
    return ok(updated);
  },
});

export const deleteWebhook = route({
  method: 'DELETE',
  path: '/api/webhooks/{id}',
  operationId: 'deleteWebhook',
  summary: 'Delete a webhook',
  description: 'Stops its pending deliveries at once: every attempt reads the webhook first.',
  tag: 'Webhooks',
  scope: 'webhooks:write',
  adminOnly: true,
  callers: ['apiKey', 'operator'],
  params: webhookParams,
  response: { status: 200, schema: successResult, description: 'Deleted' },
  errors: [404],
  examples: { response: { success: true } },
  handle: async ({ caller, params }) => {
    if (!(await webhooks.remove(caller.orgId, params.id, auditActorOf(caller))))
      throw new NotFoundError('Webhook not found');
    return ok({ success: true });
  },
});

export const rotateWebhookSecret = route({
  method: 'POST',
  path: '/api/webhooks/{id}/rotate-secret',
  operationId: 'rotateWebhookSecret',
  summary: 'Rotate the signing secret',
  description:
    'Returns the new secret, once. For 24 hours deliveries carry two signatures (new and old, space-separated), so receivers can switch without missing one.',
  tag: 'Webhooks',
  scope: 'webhooks:write',
  adminOnly: true,
  callers: ['apiKey', 'operator'],
  params: webhookParams,
  response: { status: 200, schema: z.object({ secret: z.string() }), description: 'The new secret' },
  errors: [404],
  examples: { response: { secret: 'whsec_Xk3Jq8n2Lr5Tv9Wy1Bz4Cd7Fg0Hj6Km8Np2Qs5Ru9Vw=' } },
  handle: async ({ caller, params }) => {
    const secret = generateSecret();
    if (!(await webhooks.rotate(caller.orgId, params.id, secret, auditActorOf(caller))))
      throw new NotFoundError('Webhook not found');
    return ok({ secret });
  },
});
