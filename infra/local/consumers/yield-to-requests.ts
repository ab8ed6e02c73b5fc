import { sleep } from './consumer';

/**
 * The gate every local poller passes before each poll: closed while the consumer is paused, or
 * (for a bounded time) while the API has a burst in hand. It exists because locally the workers
 * share the API's cores, which they never do in AWS (docs/local.md, "Workers yield to a busy API").
 */

/**
 * When the local pollers hold back for the API. In AWS the workers run on instances of their own and
 * never take CPU from a request; here every function shares this machine's cores, so while `busy()`
 * says the API has a burst in hand, a poller waits before its next poll, for at most `maxMs` at a
 * time (a sustained load still lets each poller through once per `maxMs`). Nothing read is held
 * back: what was polled is handed to the worker at once, and the next poll catches up.
 */
export interface YieldToRequests {
  busy: () => boolean;
  maxMs: number;
}

/** Pause/resume for a polling loop: `open()` resolves at once unless paused (or the API is busy). */
export function pollGate(yieldTo: YieldToRequests | undefined) {
  let paused = false;
  return {
    pause: () => {
      paused = true;
    },
    resume: () => {
      paused = false;
    },
    async open(running: () => boolean): Promise<void> {
      let heldSince: number | undefined;
      while (running()) {
        if (paused) {
          heldSince = undefined;
        } else {
          if (!yieldTo?.busy()) return;
          heldSince ??= Date.now();
          if (Date.now() - heldSince >= yieldTo.maxMs) return;
        }
        await sleep(10);
      }
    },
  };
}
