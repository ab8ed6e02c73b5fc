import { type DayTotals, meanOf, medianFromBuckets, responseRateOf, sumTotals } from './counters';
import type { Span } from './window';

/** One line of the analytics export: a figure of the period from `start` (included) to `end` (excluded). */
export interface MetricRow {
  metric: string;
  value: number | null;
  start: string;
  end: string;
}

/**
 * The figures of one period, in the order of the export. Means and the median are null with
 * nothing to measure. `first_response_time_median_ms` comes from the histogram: the upper bound of
 * the bucket holding the median (see `medianFromBuckets`).
 */
export function metricsOf(totals: DayTotals): [string, number | null][] {
  const [one = 0, two = 0, three = 0, four = 0, five = 0] = totals.csatScores;
  return [
    ['conversations_created', totals.conversationsCreated],
    ['conversations_closed', totals.conversationsClosed],
    ['messages_total', totals.visitorMessages + totals.operatorMessages],
    ['messages_from_visitors', totals.visitorMessages],
    ['messages_from_operators', totals.operatorMessages],
    ['first_responses', totals.firstResponses],
    ['first_response_time_mean_ms', meanOf(totals.firstResponseMsSum, totals.firstResponses)],
    ['first_response_time_median_ms', medianFromBuckets(totals.firstResponseBuckets)],
    ['csat_responses', totals.csatResponses],
    ['csat_average_score', meanOf(totals.csatScoreSum, totals.csatResponses)],
    ['csat_response_rate', responseRateOf(totals.csatResponses, totals.conversationsClosed)],
    ['csat_score_1', one],
    ['csat_score_2', two],
    ['csat_score_3', three],
    ['csat_score_4', four],
    ['csat_score_5', five],
  ];
}

/**
 * The export's rows: every metric for the whole window, then, with `granularity` `day`, every metric
 * of each UTC day the window touches, oldest first, the first and last cut to the window. Every
 * `end` is excluded; the days' periods together are exactly the window.
 */
export function analyticsRows(
  window: Span,
  days: readonly { span: Span; totals: DayTotals }[],
  granularity?: 'day',
): MetricRow[] {
  const rowsOf = (totals: DayTotals, span: Span): MetricRow[] =>
    metricsOf(totals).map(([metric, value]) => ({
      metric,
      value,
      start: new Date(span.from).toISOString(),
      end: new Date(span.to).toISOString(),
    }));
  return [
    ...rowsOf(sumTotals(days.map((day) => day.totals)), window),
    ...(granularity === 'day' ? days.flatMap((day) => rowsOf(day.totals, day.span)) : []),
  ];
}
