import { addDays, dayOf } from '../../shared/analytics/days';
import { clock } from '../../shared/clock';
import { organizations } from '../../shared/db/organizations';
import { readUsage } from '../../shared/db/usage';
import { NotFoundError } from '../../shared/errors';
import { ok, route } from '../../shared/http/route';
import { uuid } from '../../shared/schemas/common';
import { ids } from '../../shared/schemas/examples';
import { lazily } from '../../shared/schemas/names';
import {
  usageQuery,
  usageRanking,
  usageReport as usageReportSchema,
  usageTopQuery,
} from '../../shared/schemas/usage';
import * as z from '../../shared/schemas/zod';
import {
  type Granularity,
  MAX_USAGE_DAYS,
  type UsageWindow,
  usageReport,
  usageWindow,
} from '../../shared/usage/report';
import { RANKED_METRICS } from '../../shared/usage/usage';

const WHAT_COUNTS = [
  '`from` and `to` are UTC dates: `from` included, `to` excluded, at most ' +
    `${MAX_USAGE_DAYS} days apart (422 naming the parameter otherwise, and when \`from\` is not before \`to\`); by default the 30 days that end today (\`to\` is tomorrow). \`granularity\` \`day\` (default) or \`month\` (UTC calendar months, the first and last cut to the window). One entry per period, oldest first, zeros included; \`totals\` sums the window (\`storedBytes\`: at its end).`,
  'What counts: `conversationsCreated`; `messages` every message posted (a conversation’s first included), `visitorMessages` those sent by visitors; `notes`; `events` written to the feed; `webhookDeliveries.attempted` every HTTP attempt, `succeeded` deliveries answered 2xx, `failed` deliveries given up; `exports` the streamed exports (`/api/export/conversations`, its bulk form) and their data rows; `transcripts` PDF transcripts rendered and transcripts e-mailed; `uploads` completed uploads and their bytes; `storedBytes` the bytes of uploads stored at the period’s end; `searchQueries` answered searches; `apiRequests` every request authenticated as the organization (API keys, operator sessions, visitor tokens, the widget key) — `clientErrors` its 4xx but 429, `rateLimited` its 429, `serverErrors` its 5xx; `capacityUnits` the DynamoDB read and write units its requests consumed (fractions: an eventually consistent read is half a unit).',
  'Days are UTC. Activity shows within 60 s (each function instance writes what it metered every 10 s; the rest is counted from the table’s stream within seconds), and nothing is counted twice. Reading usage is itself a request, and counts.',
].join('\n\n');

const exampleUsage = {
  conversationsCreated: 12,
  messages: 140,
  visitorMessages: 71,
  notes: 4,
  events: 190,
  webhookDeliveries: { attempted: 192, succeeded: 189, failed: 1 },
  exports: { count: 1, rows: 12 },
  transcripts: 2,
  uploads: { count: 3, bytes: 482_113 },
  storedBytes: 1_204_551,
  searchQueries: 9,
  apiRequests: { total: 612, clientErrors: 7, rateLimited: 0, serverErrors: 0 },
  capacityUnits: { read: 301.5, write: 1_288 },
};
const example = {
  organizationId: ids.organization,
  from: '2026-11-01',
  to: '2026-11-03',
  granularity: 'day' as const,
  data: [
    { period: '2026-11-01', ...exampleUsage },
    { period: '2026-11-02', ...exampleUsage },
  ],
  totals: {
    ...exampleUsage,
    conversationsCreated: 24,
    messages: 280,
  },
};

/** The organization's usage over `window` (its `to` excluded), period by period. */
async function usageOver(orgId: string, window: UsageWindow, granularity: Granularity) {
  const { counters, storedDeltas } = await readUsage(orgId, window.from, addDays(window.to, -1));
  return usageReport(window, granularity, counters, storedDeltas);
}

async function reportFor(orgId: string, query: { from?: string; to?: string; granularity: Granularity }) {
  const window = usageWindow(query, dayOf(clock.nowIso()));
  return { organizationId: orgId, ...(await usageOver(orgId, window, query.granularity)) };
}

export const getUsage = route({
  method: 'GET',
  path: '/api/usage',
  operationId: 'getUsage',
  summary: 'Usage of the organization',
  description: `What the organization did, per day or month. Administrators only: operator sessions of the \`admin\` role, API keys with \`usage:read\` (or unrestricted).\n\n${WHAT_COUNTS}`,
  tag: 'Usage',
  scope: 'usage:read',
  adminOnly: true,
  callers: ['apiKey', 'operator'],
  query: usageQuery,
  response: { status: 200, schema: usageReportSchema, description: 'The window’s usage, period by period' },
  examples: { response: example },
  handle: async ({ caller, query }) => ok(await reportFor(caller.orgId, query)),
});

const orgParams = lazily(() => z.strictObject({ orgId: uuid }));

export const getOrganizationUsage = route({
  method: 'GET',
  path: '/api/admin/organizations/{orgId}/usage',
  operationId: 'getOrganizationUsage',
  summary: 'Usage of an organization',
  description: `The platform administrator’s view of one organization’s usage: the same query and answer as \`GET /api/usage\`; 404 for an organization that does not exist.\n\n${WHAT_COUNTS}`,
  tag: 'Usage',
  callers: ['platform'],
  params: orgParams,
  query: usageQuery,
  response: { status: 200, schema: usageReportSchema, description: 'The window’s usage, period by period' },
  examples: { response: example },
  handle: async ({ params, query }) => {
    // Both reads at once: one round trip; a missing organization's (empty) usage is thrown away.
    const [organization, report] = await Promise.all([
      organizations.get(params.orgId, { consistent: false }),
      reportFor(params.orgId, query),
    ]);
    if (!organization) throw new NotFoundError('Organization not found');
    return ok(report);
  },
});

/** Organizations whose usage is read at once: a platform of thousands is read in waves. */
const READ_CONCURRENCY = 16;

export const getTopUsage = route({
  method: 'GET',
  path: '/api/admin/usage/top',
  operationId: 'getTopUsage',
  summary: 'Organizations ranked by usage',
  description: `The organizations with the highest value of one usage \`metric\` over the window (\`from\` included, \`to\` excluded, UTC dates; by default the 30 days that end today), highest first; \`limit\` 1–100 (default 10). Metrics: ${Object.keys(
    RANKED_METRICS,
  )
    .map((name) => `\`${name}\``)
    .join(
      ', ',
    )} (another is 422); \`storedBytes\` is the bytes stored at the window’s end. Organizations at 0 are left out; ties are ordered by organization id. Reads every organization’s usage for the window: a platform administrator’s report, not a dashboard to poll.`,
  tag: 'Usage',
  callers: ['platform'],
  query: usageTopQuery,
  response: { status: 200, schema: usageRanking, description: 'The highest organizations, highest first' },
  examples: {
    response: {
      metric: 'apiRequests',
      from: '2026-11-01',
      to: '2026-12-01',
      data: [{ organizationId: ids.organization, name: 'Acme Retail', value: 18_220 }],
    },
  },
  handle: async ({ query }) => {
    const window = usageWindow(query, dayOf(clock.nowIso()));
    const metricOf = RANKED_METRICS[query.metric];
    const orgIds = await organizations.allIds();
    const values: { organizationId: string; value: number }[] = [];
    for (let start = 0; start < orgIds.length; start += READ_CONCURRENCY) {
      const wave = orgIds.slice(start, start + READ_CONCURRENCY);
      const reports = await Promise.all(
        wave.map(async (orgId) => ({ orgId, totals: (await usageOver(orgId, window, 'day')).totals })),
      );
      for (const { orgId, totals } of reports) {
        const value = metricOf(totals);
        if (value > 0) values.push({ organizationId: orgId, value });
      }
    }
    values.sort((a, b) => b.value - a.value || (a.organizationId < b.organizationId ? -1 : 1));
    const top = values.slice(0, query.limit);
    const names = await organizations.names(top.map((entry) => entry.organizationId));
    return ok({
      metric: query.metric,
      from: window.from,
      to: window.to,
      data: top.map((entry) => ({ ...entry, name: names.get(entry.organizationId) ?? '' })),
    });
  },
});
