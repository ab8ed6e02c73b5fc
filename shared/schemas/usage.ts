import { RANKED_METRICS } from '../usage/usage';
import { uuid } from './common';
import { documented, lazily, named } from './names';
import * as z from './zod';

/** A UTC calendar date `YYYY-MM-DD`. */
const utcDate = lazily(() =>
  documented(z.iso.date().check(z.maxLength(10)), { description: 'A UTC calendar date, `YYYY-MM-DD`' }),
);

export const usageQuery = lazily(() =>
  z.strictObject({
    from: z.optional(utcDate),
    to: z.optional(utcDate),
    granularity: z._default(z.enum(['day', 'month']), 'day'),
  }),
);

const count = z.int().check(z.minimum(0));

const usageFields = () => ({
  conversationsCreated: count,
  messages: count,
  visitorMessages: count,
  notes: count,
  events: count,
  webhookDeliveries: z.object({ attempted: count, succeeded: count, failed: count }),
  exports: z.object({ count, rows: count }),
  transcripts: count,
  uploads: z.object({ count, bytes: count }),
  storedBytes: count,
  searchQueries: count,
  apiRequests: z.object({ total: count, clientErrors: count, rateLimited: count, serverErrors: count }),
  capacityUnits: z.object({ read: z.number(), write: z.number() }),
});

export const usage = named('Usage', () => z.object(usageFields()));

export const usagePeriod = named('UsagePeriod', () =>
  z.object({
    /** `YYYY-MM-DD` (a day) or `YYYY-MM` (a month). */
    period: z.string(),
    ...usageFields(),
  }),
);

export const usageReport = named('UsageReport', () =>
  z.object({
    organizationId: uuid,
    from: z.iso.date(),
    to: z.iso.date(),
    granularity: z.enum(['day', 'month']),
    data: z.array(usagePeriod),
    totals: usage,
  }),
);

export const rankedMetrics = Object.keys(RANKED_METRICS) as [
  keyof typeof RANKED_METRICS,
  ...(keyof typeof RANKED_METRICS)[],
];

export const usageTopQuery = lazily(() =>
  z.strictObject({
    metric: z.enum(rankedMetrics),
    from: z.optional(utcDate),
    to: z.optional(utcDate),
    limit: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(100)), 10),
  }),
);

export const usageRanking = named('UsageRanking', () =>
  z.object({
    metric: z.enum(rankedMetrics),
    from: z.iso.date(),
    to: z.iso.date(),
    data: z.array(z.object({ organizationId: uuid, name: z.string(), value: z.number() })),
  }),
);
