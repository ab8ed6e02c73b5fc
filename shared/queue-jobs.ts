import type { queueDefinitions } from './resources';
import { discordEventTypes } from './schemas/discord-events';
import * as z from './schemas/zod';

export type QueueName = (typeof queueDefinitions)[number]['name'];

/**
 * Every queue's job, declared once: `queues.send` takes exactly this (shared/queues.ts), and the
 * queue's worker validates each message with it (shared/batch.ts) before handling it.
 */
export const queueJobs = {
  'webhook-deliveries': z.strictObject({
    orgId: z.uuid(),
    webhookId: z.uuid(),
    deliveryId: z.uuid(),
    /** ISO instant: a job received earlier goes back to the queue for the rest of its delay. */
    notBefore: z.optional(z.string()),
    /** A manual retry is one attempt, not a new schedule. */
    manual: z.optional(z.boolean()),
    /**
     * A first attempt carries its delivery, so the worker reads nothing but the webhook and writes
     * the record once, after the attempt. Absent: the record exists and the worker reads it.
     */
    first: z.optional(
      z.strictObject({ eventId: z.uuid(), event: z.string(), createdAt: z.string(), payload: z.string() }),
    ),
  }),
  'conversation-purge': z.strictObject({
    orgId: z.uuid(),
    conversationId: z.uuid(),
    /** Where a previous step stopped: the last sort key it handled, or the prefix of the next kind. */
    after: z.optional(z.string()),
  }),
  'visitor-jobs': z.strictObject({
    orgId: z.uuid(),
    visitorId: z.uuid(),
    /** `merge`: the merged visitor's conversations move to its target; `erase`: its data is erased. */
    kind: z.enum(['merge', 'erase']),
    /** Erase: where a previous step stopped. Merge: `sweep` for the last pass, a little after the merge. */
    after: z.optional(z.string()),
  }),
  'pdf-jobs': z.strictObject({ orgId: z.uuid(), jobId: z.uuid(), conversationId: z.uuid() }),
  /** One notification for one channel; keys not declared (the message's own) are kept as they came. */
  'discord-notifications': z.looseObject({
    orgId: z.uuid(),
    /** The channel configuration's id: a job for a channel removed and added again is dropped. */
    configId: z.uuid(),
    /** Discord's id of the channel (a snowflake). */
    channelId: z.string().check(z.regex(/^\d{17,20}$/)),
    eventId: z.uuid(),
    event: z.enum(discordEventTypes),
    message: z.looseObject({ embeds: z.array(z.unknown()) }),
    /** How often Discord answered 429 to this job so far (absent at first). */
    rateLimited: z.optional(z.int().check(z.minimum(0))),
  }),
  /**
   * Sent by EventBridge, not by the service: the event GuardDuty Malware Protection for S3 sends for
   * each scanned object of the uploads bucket ("GuardDuty Malware Protection Object Scan Result").
   */
  'malware-scan-results': z.looseObject({
    detail: z.looseObject({
      s3ObjectDetails: z.looseObject({ objectKey: z.string() }),
      scanResultDetails: z.looseObject({ scanResultStatus: z.string() }),
    }),
  }),
} as const satisfies Record<QueueName, z.ZodMiniType>;

export type QueueJob<Q extends QueueName> = z.infer<(typeof queueJobs)[Q]>;
