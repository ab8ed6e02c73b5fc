import { describe, expect, it } from 'vitest';
import { toDelivery } from '../../shared/db/deliveries';
import { pickShape } from '../../shared/db/project';
import { webhooks } from '../../shared/db/webhooks';
import { built } from '../../shared/schemas/names';
import { delivery, webhook } from '../../shared/schemas/webhook';
import { deliveryFields, webhookFields } from '../../shared/schemas/webhook-fields';

/**
 * The data layer projects webhooks and deliveries onto field-name lists (so the delivery worker
 * bundles no zod); the API answers with what they project. The compiler checks that each schema
 * declares the same names; this checks the order, which is the order of every answer's fields.
 */

const stored = {
  pk: 'ORG#o',
  sk: 'WEBHOOK#w',
  entity: 'webhook',
  expiresAt: 1_767_225_600,
  orgId: '0190a3c4-7e51-7000-8000-0000000000aa',
  payload: '{"id":"e"}',
  secretSealed: 'sealed',
  // Stored in another order than the schema's, as DynamoDB reads back.
  nextAttemptAt: null,
  updatedAt: '2026-11-21T10:00:01.000Z',
  status: 'pending',
  active: true,
  id: '0190a3c4-7e51-7def-a000-0000000000cc',
  webhookId: '0190a3c4-7e51-7abc-9000-0000000000bb',
  eventId: '0190a3c4-7e51-7123-b000-0000000000dd',
  event: 'conversation.created',
  url: 'https://example.com/hook',
  events: ['conversation.created'],
  attempts: 1,
  responseStatus: 500,
  error: 'http_500',
  createdAt: '2026-11-21T10:00:00.000Z',
  lastAttemptAt: '2026-11-21T10:00:02.000Z',
};

describe('webhook field lists', () => {
  it('are the fields of the Webhook and Delivery schemas, in their order', () => {
    expect(Object.keys(built(webhook).shape)).toEqual([...webhookFields]);
    expect(Object.keys(built(delivery).shape)).toEqual([...deliveryFields]);
  });

  it('project stored items as the schemas do', () => {
    const projections: [object, object][] = [
      [toDelivery(stored), pickShape(built(delivery).shape, stored)],
      [webhooks.toWebhook(stored), pickShape(built(webhook).shape, stored)],
    ];
    for (const [projected, bySchema] of projections) {
      expect(projected).toStrictEqual(bySchema);
      expect(Object.keys(projected)).toEqual(Object.keys(bySchema));
    }
    expect(Object.keys(toDelivery(stored))).not.toContain('payload');
    expect(Object.keys(webhooks.toWebhook(stored))).not.toContain('secretSealed');
  });
});
