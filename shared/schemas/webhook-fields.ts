/**
 * The fields of the Webhook and Delivery resources, by name and in order, without zod. The data
 * layer projects stored items onto these lists, so the webhook delivery worker, which reads both
 * resources but answers no request, bundles no zod (31 KB of its minified bundle, and several ms of
 * its cold import). The schemas in ./webhook.ts declare exactly these fields: the compiler checks
 * the names where each schema is declared (`ShapeOf`), test/unit/webhook-fields.test.ts checks the
 * order.
 */
export const webhookFields = ['id', 'url', 'events', 'active', 'createdAt', 'updatedAt'] as const;

export const deliveryFields = [
  'id',
  'webhookId',
  'eventId',
  'event',
  'status',
  'attempts',
  'responseStatus',
  'error',
  'createdAt',
  'lastAttemptAt',
  'nextAttemptAt',
] as const;

/** An object shape with exactly the fields `Names` lists (`satisfies` rejects extra and missing keys). */
export type ShapeOf<Names extends readonly string[]> = { readonly [Name in Names[number]]: unknown };
