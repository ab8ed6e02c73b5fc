import { addDays, dayOf, daysBetween } from '../../shared/analytics/days';
import { analyticsRows } from '../../shared/analytics/export';
import { clock } from '../../shared/clock';
import { stats } from '../../shared/db/stats';
import { ValidationError } from '../../shared/errors';
import { csvRow } from '../../shared/exports/csv';
import { reply, route } from '../../shared/http/route';
import { analyticsCsvExample } from '../../shared/schemas/examples';
import { analyticsExportQuery } from '../../shared/schemas/survey';
import * as z from '../../shared/schemas/zod';

/** Days one export may cover: a year of daily figures, read in one round trip (four Queries). */
const MAX_DAYS = 366;
/** The default window: the 30 UTC days ending today. */
const DEFAULT_DAYS = 30;

const dayOfMs = (ms: number) => dayOf(new Date(ms).toISOString());

export const exportAnalytics = route({
  method: 'GET',
  path: '/api/export/analytics',
  operationId: 'exportAnalytics',
  summary: 'Export analytics as CSV',
  description: [
    'A `text/csv` attachment with the columns `metric,value,period_start,period_end`. The figures are kept per UTC day as the data is written, so a window covers the whole days its bounds fall in: `date_from` and `date_to` (ISO 8601 instants, or dates) name the first and last day; without them the window is the 30 days ending today (today so far included). `period_start` is the first day’s midnight and `period_end` the midnight after the last day (excluded). At most 366 days (422 `date_from`); `date_from` after `date_to` is 422.',
    'The first rows cover the whole window, then the same metrics follow for each day, oldest first: `conversations_created`, `conversations_closed` (every move to `closed`), `messages_total`, `messages_from_visitors`, `messages_from_operators`, `first_responses` (conversations whose first operator answer came that day), `first_response_time_mean_ms`, `first_response_time_median_ms` (from a histogram of fixed buckets: the upper bound of the bucket holding the median, so the true median is at most this value and above the bucket below; the bounds are 30 s, 1, 2, 5, 10, 15 and 30 min, 1, 2, 4, 8, 24 and 48 h, and a median above 48 h reads 172800000), `csat_responses`, `csat_average_score`, `csat_response_rate` (responses ÷ closed, capped at 1), `csat_score_1`…`csat_score_5`. A mean or median with nothing to measure is an empty cell. Deleting a conversation removes its survey response from the CSAT figures; its other figures stay (they happened).',
    'The cost grows with the days asked, never with the organization’s data.',
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
    const today = dayOf(clock.nowIso());
    const to = query.date_to ? dayOfMs(Date.parse(query.date_to)) : today;
    const from = query.date_from ? dayOfMs(Date.parse(query.date_from)) : addDays(to, 1 - DEFAULT_DAYS);
    if (from > to) throw ValidationError.field('date_from', 'date_from must not be after date_to');
    if (addDays(from, MAX_DAYS - 1) < to)
      throw ValidationError.field('date_from', `An export covers at most ${MAX_DAYS} days`);
    const days = daysBetween(from, to);
    const byDay = await stats.days(caller.orgId, from, to);
    const csv = [
      csvRow(['metric', 'value', 'period_start', 'period_end']),
      ...analyticsRows(days, byDay).map((row) => csvRow([row.metric, row.value, row.start, row.end])),
    ].join('');
    return reply(200, csv, {
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="analytics_${from}_${to}.csv"`,
    });
  },
});
