/**
 * Polls `read` until `done` holds or the time is up, and returns the last value read: async flows
 * (streams, queues, deliveries) are tested by listening and polling, never by sleeping blindly.
 */
export async function eventually<T>(
  read: () => Promise<T> | T,
  done: (value: T) => boolean,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 100));
  }
}
