import { periodDays, csatReport as reportOf } from '../../shared/analytics/csat';
import { dayOf } from '../../shared/analytics/days';
import { clock } from '../../shared/clock';
import { stats } from '../../shared/db/stats';
import { ok, route } from '../../shared/http/route';
import { csatExample } from '../../shared/schemas/examples';
import { csatQuery, csatReport } from '../../shared/schemas/survey';

export const getCsat = route({
  method: 'GET',
  path: '/api/analytics/csat',
  operationId: 'getCsatAnalytics',
  summary: 'CSAT analytics',
  description:
    '`period` is `7d`, `30d` (default) or `90d`: that many UTC days, today included. Active survey responses given in the period count (a deleted response, or one whose conversation was deleted, does not). `averageScore` is the mean score (null with no responses), `distribution` the responses per score, `responseRate` the responses ÷ the conversations closed in the period (a fraction 0–1, capped at 1; 0 when none closed; every move to `closed` counts, by PATCH or bulk close). `byOperator` credits each response to the conversation’s operator when it was given (unassigned conversations count only in the totals); `daily` lists every day of the period. The figures come from daily aggregates kept as the data is written, so the cost does not grow with the organization’s size; they may lag a write by a second.',
  tag: 'Analytics',
  scope: 'surveys:read',
  callers: ['apiKey', 'operator'],
  query: csatQuery,
  response: { status: 200, schema: csatReport, description: 'The period’s CSAT figures' },
  examples: { response: csatExample },
  handle: async ({ caller, query }) => {
    const days = periodDays(query.period, dayOf(clock.nowIso()));
    const from = days[0] ?? '';
    const to = days.at(-1) ?? '';
    // Organization days and operator days: two Queries, one round trip.
    const [byDay, byOperator] = await Promise.all([
      stats.days(caller.orgId, from, to),
      stats.operators(caller.orgId, from, to),
    ]);
    return ok(reportOf(query.period, days, byDay, byOperator));
  },
});
