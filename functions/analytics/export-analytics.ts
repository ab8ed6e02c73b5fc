import { analyticsRows } from '../../shared/analytics/export';
import {
  DAY_MS,
  DEFAULT_WINDOW_DAYS,
  dayFigures,
  exportWindow,
  MAX_WINDOW_DAYS,
  planDays,
  spansToCount,
} from '../../shared/analytics/window';
import { clock } from '../../shared/clock';
import { countSpans, PART_DAY_HORIZON_MS } from '../../shared/db/activity';
import { EVENT_RETENTION_MS } from '../../shared/db/events';
import { stats } from '../../shared/db/stats';
import { csvRow } from '../../shared/exports/csv';
import { reply, route } from '../../shared/http/route';
import { analyticsCsvExample } from '../../shared/schemas/examples';
import { analyticsExportQuery } from '../../shared/schemas/survey';
import * as z from '../../shared/schemas/zod';

const days = (ms: number) => Math.floor(ms / DAY_MS);

export const exportAnalytics = route({
  method: 'GET',
  path: '/api/export/analytics',
  operationId: 'exportAnalytics',
  summary: 'Export analytics as CSV',
  description: [
    `A \`text/csv\` attachment with the columns \`metric,value,period_start,period_end\`. The window runs from \`date_from\` (included) to \`date_to\` (excluded), to the millisecond: ISO 8601 instants with any offset, or dates (a date is its UTC midnight, so \`date_from=2026-11-01&date_to=2026-12-01\` is November). Without \`date_to\` it ends at the request time; without \`date_from\` it starts ${DEFAULT_WINDOW_DAYS} days before its end. \`date_from\` must be before \`date_to\` and the window at most ${MAX_WINDOW_DAYS} days long (else 422 \`date_from\`). A bound more than ${days(PART_DAY_HORIZON_MS)} days before the request time must be a UTC midnight (422 naming it otherwise): within a day the figures are counted item by item from the organization’s event log, which is kept ${days(EVENT_RETENTION_MS)} days. \`granularity\` other than \`day\`, or \`format\` other than \`csv\`, is 422.`,
    'First comes one row per metric for the whole window: `period_start` and `period_end` are exactly its bounds. With `granularity=day`, one row per metric and UTC day follows, oldest day first: `period_start` the day’s UTC midnight and `period_end` the next one, the first and last days cut to the window. Every `period_end` is excluded.',
    'The metrics count exactly what happened within the period: `conversations_created`, `conversations_closed` (every move to `closed`), `messages_total`, `messages_from_visitors`, `messages_from_operators`, `first_responses` (conversations whose first operator answer came in the period), `first_response_time_mean_ms`, `first_response_time_median_ms` (from a histogram of fixed buckets: the upper bound of the bucket holding the median, so the true median is at most this value and above the bucket below; the bounds are 30 s, 1, 2, 5, 10, 15 and 30 min, 1, 2, 4, 8, 24 and 48 h, and a median above 48 h reads 172800000), `csat_responses`, `csat_average_score`, `csat_response_rate` (responses ÷ closed, capped at 1), `csat_score_1`…`csat_score_5`. A mean or median with nothing to measure is an empty cell. Deleting a conversation removes its survey response from the CSAT figures; its other figures stay (they happened). Figures count the writes committed when the export reads, and may lag one by a second.',
    'Whole UTC days are read from daily aggregates, so their cost does not grow with the organization’s size; the part-days at the window’s ends are read item by item, so their cost grows with the activity of those hours.',
  ].join('\n\n'),
  tag: 'Analytics',
  scope: 'export:read',
  callers: ['apiKey', 'operator'],
  query: analyticsExportQuery,
  response: {
    status: 200,
    schema: z.string(),
    description: 'The CSV file (attachment)',
    contentType: 'text/csv',
  },
  examples: { response: analyticsCsvExample },
  handle: async ({ caller, query }) => {
    const now = clock.nowMs();
    const window = exportWindow(query, now, PART_DAY_HORIZON_MS);
    const plans = planDays(window, now);
    const first = plans[0]?.day ?? '';
    const last = plans.at(-1)?.day ?? '';
    // The day counters and the part-days' items are read side by side.
    const [counters, counted] = await Promise.all([
      stats.days(caller.orgId, first, last),
      countSpans(caller.orgId, spansToCount(plans)),
    ]);
    const rows = analyticsRows(window, dayFigures(plans, counters, counted), query.granularity);
    const csv = [
      csvRow(['metric', 'value', 'period_start', 'period_end']),
      ...rows.map((row) => csvRow([row.metric, row.value, row.start, row.end])),
    ].join('');
    return reply(200, csv, {
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="analytics_${first}_${last}.csv"`,
    });
  },
});
