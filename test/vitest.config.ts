import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = fileURLToPath(new URL('..', import.meta.url));

export default defineConfig({
  test: {
    root,
    // Vitest's default on this 2-core machine is one file at a time (cores − 1). Most of a file's
    // time is waiting on the stack's own clocks (index lag, the feed's settle time, stream polls), so
    // two files at once overlap those waits: the suite took 373 s instead of 604 s (one run each).
    maxWorkers: 2,
    projects: [
      {
        test: {
          name: 'unit',
          root,
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          root,
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/integration/global-setup.ts'],
          setupFiles: ['test/integration/response-conformance.setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          // The OpenAPI document under stock linters and its examples (no stack needed).
          name: 'openapi',
          root,
          include: ['test/openapi/**/*.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 90_000,
        },
      },
      {
        test: {
          name: 'infra',
          root,
          include: ['test/infra/**/*.test.ts'],
          environment: 'node',
          testTimeout: 120_000,
        },
      },
    ],
  },
});
