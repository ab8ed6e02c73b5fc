/**
 * Aggregates are kept per UTC calendar day (`YYYY-MM-DD`): the day of an ISO 8601 UTC instant is
 * its first ten characters, and days compare and sort as text.
 */
const DAY_MS = 86_400_000;

export const dayOf = (iso: string): string => iso.slice(0, 10);

export function addDays(day: string, count: number): string {
  return new Date(Date.parse(`${day}T00:00:00.000Z`) + count * DAY_MS).toISOString().slice(0, 10);
}

/** Whole days from `from` to `to`, both included (empty when `to` is before `from`). */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let day = from; day <= to; day = addDays(day, 1)) days.push(day);
  return days;
}
