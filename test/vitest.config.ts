import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = fileURLToPath(new URL('..', import.meta.url));

export default defineConfig({
  test: {
    root,
    // Vitest's default on this 2-core machine is one file at a time (cores − 1). Most of a file's
    // time is waiting on the stack's own clocks (index lag, the feed's settle time, stream polls), so
    // files at once overlap those waits: 604 s one at a time, 359 s two, 270 s three, 271 s four
    // (the cores are busy by then). One run each, docs/decisions.md "Test time".
    maxWorkers: 3,
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
