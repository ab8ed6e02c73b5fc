/**
 * The one source of "now". Tests and the local stack may shift it (edit windows, snoozes, expiry)
 * without touching the system clock; production never sets an offset.
 */
let offsetMs = 0;

export const clock = {
  nowMs: (): number => Date.now() + offsetMs,
  nowIso: (): string => new Date(Date.now() + offsetMs).toISOString(),
  /** Test hook: move "now" forward (or back) by `ms` for everything that reads this clock. */
  advance(ms: number): void {
    offsetMs += ms;
  },
  reset(): void {
    offsetMs = 0;
  },
};
