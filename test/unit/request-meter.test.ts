import { afterEach, describe, expect, it, vi } from 'vitest';
import { logger } from '../../shared/logger';

/** What a function instance meters of the requests it answers, and when it writes it. */
const written = vi.hoisted(() => ({ flushes: [] as unknown[][], fail: false }));
vi.mock('../../shared/db/usage', () => ({
  writeUsageCounts: async (_instance: string, entries: unknown[]) => {
    if (written.fail) throw new Error('throttled');
    written.flushes.push(structuredClone(entries));
  },
}));

const { flushUsage, flushUsageIfDue, meterRequest } = await import('../../shared/usage/request-meter');

const at = Date.parse('2026-11-20T10:00:00Z');
const request = (status: number, route = 'getConversation', orgId = 'o1') => ({
  orgId,
  route,
  status,
  readUnits: 0.5,
  writeUnits: 2,
  nowMs: at,
});

afterEach(async () => {
  written.fail = false;
  await flushUsage();
  written.flushes.length = 0;
});

describe('the request meter', () => {
  it('counts each request by status class, its units and answered searches, per organization and day', async () => {
    for (const status of [200, 201, 404, 422, 429, 500, 503]) meterRequest(request(status));
    meterRequest(request(200, 'searchConversations'));
    meterRequest(request(400, 'searchConversations'));
    meterRequest({ ...request(200, 'getConversation', 'o2'), nowMs: at + 86_400_000 });
    await flushUsage();
    expect(written.flushes).toEqual([
      [
        {
          orgId: 'o1',
          day: '2026-11-20',
          counts: { req: 9, req4: 3, req429: 1, req5: 2, rcu: 4.5, wcu: 18, srch: 1 },
        },
        { orgId: 'o2', day: '2026-11-21', counts: { req: 1, rcu: 0.5, wcu: 2 } },
      ],
    ]);
  });

  it('writes at most once an interval, and keeps what a failed write held for the next', async () => {
    meterRequest(request(200));
    // An interval (10 s by default) after the last write: due.
    await flushUsageIfDue(Date.now() + 10_001);
    expect(written.flushes).toHaveLength(1);
    meterRequest(request(200));
    // Within the interval: nothing written.
    await flushUsageIfDue(Date.now());
    expect(written.flushes).toHaveLength(1);
    written.fail = true;
    const warned = vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    await flushUsage();
    expect(warned).toHaveBeenCalledWith(
      'usage: metered requests not written, kept for the next flush',
      expect.objectContaining({ organizationDays: 1 }),
    );
    warned.mockRestore();
    written.fail = false;
    meterRequest(request(404));
    await flushUsage();
    expect(written.flushes.at(-1)).toEqual([
      { orgId: 'o1', day: '2026-11-20', counts: { req: 2, req4: 1, rcu: 1, wcu: 4 } },
    ]);
  });
});
