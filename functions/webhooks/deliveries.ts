import { clock } from '../../shared/clock';
import { deliveries, deliveryIdFor, toDelivery } from '../../shared/db/deliveries';
import { webhooks } from '../../shared/db/webhooks';
import { ConflictError, NotFoundError } from '../../shared/errors';
import { ok, reply, route } from '../../shared/http/route';
import { uuidv7 } from '../../shared/ids';
import { paginationOf } from '../../shared/schemas/common';
import { deliveryExample, examplePage } from '../../shared/schemas/examples';
import {
  delivery,
  deliveryList,
  deliveryListQuery,
  deliveryParams,
  webhookParams,
} from '../../shared/schemas/webhook';
import * as z from '../../shared/schemas/zod';
import { enqueueDelivery, startDelivery } from '../../shared/webhooks/dispatch';

async function existingWebhook(orgId: string, webhookId: string) {
  const found = await webhooks.get(orgId, webhookId);
  if (!found) throw new NotFoundError('Webhook not found');
  return found;
}

export const listDeliveries = route({
  method: 'GET',
  path: '/api/webhooks/{id}/deliveries',
  operationId: 'listWebhookDeliveries',
  summary: 'Delivery history',
  description:
    'Newest first, offset page (`limit` default 20, at most 100). Each delivery records its attempts: `status` pending, succeeded or failed, the last `responseStatus` and `error` (truncated), and `nextAttemptAt` while retries remain. Never a secret.',
  tag: 'Webhooks',
  scope: 'webhooks:read',
  callers: ['apiKey', 'operator'],
  params: webhookParams,
  query: deliveryListQuery,
  response: { status: 200, schema: deliveryList, description: 'A page of deliveries' },
  errors: [404],
  examples: { response: examplePage(deliveryExample) },
  handle: async ({ caller, params, query }) => {
    const [, page] = await Promise.all([
      existingWebhook(caller.orgId, params.id),
      deliveries.list(caller.orgId, params.id, query.offset, query.limit),
    ]);
    return ok({ data: page.data, pagination: paginationOf(query.offset, query.limit, page.totalItems) });
  },
});

export const retryDelivery = route({
  method: 'POST',
  path: '/api/webhooks/{id}/deliveries/{deliveryId}/retry',
  operationId: 'retryWebhookDelivery',
  summary: 'Retry a failed delivery',
  description:
    'Only a failed delivery (409 otherwise). Queues one new attempt with the same `webhook-id` and body.',
  tag: 'Webhooks',
  scope: 'webhooks:write',
  callers: ['apiKey', 'operator'],
  params: deliveryParams,
  response: {
    status: 202,
    schema: z.object({ success: z.boolean(), status: z.literal('pending') }),
    description: 'A new attempt is queued',
  },
  errors: [404, 409],
  examples: { response: { success: true, status: 'pending' } },
  handle: async ({ caller, params }) => {
    await existingWebhook(caller.orgId, params.id);
    const outcome = await deliveries.reopen(caller.orgId, params.id, params.deliveryId);
    if (outcome === 'missing') throw new NotFoundError('Delivery not found');
    if (outcome === 'not_failed')
      throw new ConflictError('Only failed deliveries can be retried', { reason: 'not_failed' });
    await enqueueDelivery({
      orgId: caller.orgId,
      webhookId: params.id,
      deliveryId: params.deliveryId,
      manual: true,
    });
    return reply(202, { success: true, status: 'pending' as const });
  },
});

export const testWebhook = route({
  method: 'POST',
  path: '/api/webhooks/{id}/test',
  operationId: 'testWebhook',
  summary: 'Send a test event',
  description:
    'Sends a `webhook.test` event to the target now (signed like every delivery) and answers with its delivery; follow it in the delivery history.',
  tag: 'Webhooks',
  scope: 'webhooks:write',
  callers: ['apiKey', 'operator'],
  params: webhookParams,
  response: { status: 202, schema: delivery, description: 'The queued delivery' },
  errors: [404],
  examples: {
    response: {
      ...deliveryExample,
      event: 'webhook.test',
      status: 'pending',
      attempts: 0,
      responseStatus: null,
      lastAttemptAt: null,
      nextAttemptAt: '2026-11-21T10:02:05.400Z',
    },
  },
  handle: async ({ caller, params }) => {
    const target = await existingWebhook(caller.orgId, params.id);
    const eventId = uuidv7();
    const now = clock.nowIso();
    const payload = JSON.stringify({
      id: eventId,
      type: 'webhook.test',
      timestamp: now,
      organizationId: caller.orgId,
      data: { webhookId: target.id, url: target.url },
    });
    const queued = {
      id: deliveryIdFor(target.id, eventId),
      orgId: caller.orgId,
      webhookId: target.id,
      eventId,
      event: 'webhook.test',
      status: 'pending' as const,
      attempts: 0,
      responseStatus: null,
      error: null,
      createdAt: now,
      lastAttemptAt: null,
      nextAttemptAt: now,
      payload,
    };
    await startDelivery(queued);
    return reply(202, toDelivery(queued));
  },
});
