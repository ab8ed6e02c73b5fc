import type { CsatPeriod, CsatReport } from '../schemas/survey';
import { type DayTotals, meanOf, responseRateOf, sumTotals } from './counters';
import { addDays, daysBetween } from './days';

const PERIOD_DAYS: Record<CsatPeriod, number> = { '7d': 7, '30d': 30, '90d': 90 };

/** The UTC days of a period ending today (today included), oldest first. */
export function periodDays(period: CsatPeriod, today: string): string[] {
  return daysBetween(addDays(today, 1 - PERIOD_DAYS[period]), today);
}

/**
 * The CSAT figures of `days` from the daily aggregates: organization totals per day and per
 * operator totals of the whole period. Days without an aggregate count as zero.
 */
export function csatReport(
  period: CsatPeriod,
  days: readonly string[],
  byDay: ReadonlyMap<string, DayTotals>,
  byOperator: ReadonlyMap<string, { responses: number; scoreSum: number }>,
): CsatReport {
  const total = sumTotals(days.flatMap((day) => byDay.get(day) ?? []));
  const [one = 0, two = 0, three = 0, four = 0, five = 0] = total.csatScores;
  return {
    period,
    averageScore: meanOf(total.csatScoreSum, total.csatResponses),
    totalResponses: total.csatResponses,
    responseRate: responseRateOf(total.csatResponses, total.conversationsClosed),
    distribution: { '1': one, '2': two, '3': three, '4': four, '5': five },
    byOperator: [...byOperator]
      .filter(([, operator]) => operator.responses > 0)
      .map(([operatorId, operator]) => ({
        operatorId,
        averageScore: operator.scoreSum / operator.responses,
        responses: operator.responses,
      }))
      .sort((a, b) => b.responses - a.responses || a.operatorId.localeCompare(b.operatorId)),
    daily: days.map((date) => {
      const totals = byDay.get(date);
      return {
        date,
        averageScore: totals ? meanOf(totals.csatScoreSum, totals.csatResponses) : null,
        responses: totals?.csatResponses ?? 0,
      };
    }),
  };
}
