import { afterAll, beforeAll, inject } from 'vitest';
import { clock } from '../../shared/clock';
import { useBaseUrl } from './api';

/**
 * A gateway and function isolates of this test file's own, against the emulators the global setup
 * started, so the file can move `clock` (edit windows, snoozes, expiry) — here and in each of its
 * functions' isolates — without disturbing the files that run beside it. Call at the top of the file.
 */
export function useInProcessStack(): { advance(ms: number): void; reset(): void } {
  let stop: (() => Promise<void>) | undefined;
  let setClockOffset: ((offsetMs: number) => void) | undefined;
  let offsetMs = 0;
  beforeAll(async () => {
    const endpoints = inject('endpoints');
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
      AWS_ENDPOINT_URL_SQS: endpoints.sqs,
      AWS_ENDPOINT_URL_S3: endpoints.s3,
      AWS_ENDPOINT_URL_SESV2: endpoints.ses,
      RATE_LIMIT_PER_MINUTE: String(inject('rateLimitPerMinute')),
      POWERTOOLS_LOG_LEVEL: 'ERROR',
    });
    const { startLocalStack } = await import('../../infra/local/stack');
    const stack = await startLocalStack({
      port: 0,
      seedDemo: false,
      // The global stack's consumers serve the shared queues and stream; two sets would race.
      runWorkers: false,
      platformAdminToken: inject('platformAdminToken'),
      env: { CURSOR_SIGNING_KEY: inject('cursorSigningKey') },
    });
    useBaseUrl(stack.baseUrl);
    stop = stack.stop;
    setClockOffset = (offset) => stack.runtime.setClockOffset(offset);
  });
  afterAll(async () => {
    clock.reset();
    offsetMs = 0;
    await stop?.();
  });
  return {
    advance: (ms) => {
      clock.advance(ms);
      offsetMs += ms;
      setClockOffset?.(offsetMs);
    },
    reset: () => {
      clock.reset();
      offsetMs = 0;
      setClockOffset?.(0);
    },
  };
}
