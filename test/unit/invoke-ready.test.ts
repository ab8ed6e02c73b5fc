import { beforeEach, describe, expect, it, vi } from 'vitest';

/** Work registered to run before the first request (secrets), shared by concurrent requests, retried on failure. */
describe('invokeReady', () => {
  beforeEach(() => {
    vi.resetModules();
  });

  it('runs each task once for concurrent and later requests', async () => {
    const { beforeFirstInvoke, invokeReady } = await import('../../shared/invoke-ready');
    const task = vi.fn(async () => undefined);
    beforeFirstInvoke(task);
    await Promise.all([invokeReady(), invokeReady()]);
    await invokeReady();
    expect(task).toHaveBeenCalledTimes(1);
  });

  it('fails the request whose task failed and runs it again for the next one', async () => {
    const { beforeFirstInvoke, invokeReady } = await import('../../shared/invoke-ready');
    const task = vi
      .fn()
      .mockRejectedValueOnce(new Error('extension unreachable'))
      .mockResolvedValue(undefined);
    beforeFirstInvoke(task);
    await expect(invokeReady()).rejects.toThrow(/unreachable/);
    await invokeReady();
    expect(task).toHaveBeenCalledTimes(2);
  });
});
