import type { TestProject } from 'vitest/node';
import { type LocalStack, startLocalStack } from '../../infra/local/stack';

declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
    platformAdminToken: string;
    rateLimitPerMinute: number;
    endpoints: Record<string, string>;
    tableName: string;
    cursorSigningKey: string;
  }
}

/** Integration tests share one local stack: real emulators, the real local gateway, the real handlers. */
let stack: LocalStack | undefined;

export const RATE_LIMIT_PER_MINUTE = 600;

export async function setup(project: TestProject): Promise<void> {
  stack = await startLocalStack({
    port: 0,
    seedDemo: false,
    env: { RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT_PER_MINUTE), POWERTOOLS_LOG_LEVEL: 'ERROR' },
  });
  project.provide('baseUrl', stack.baseUrl);
  project.provide('platformAdminToken', stack.platformAdminToken);
  project.provide('rateLimitPerMinute', RATE_LIMIT_PER_MINUTE);
  project.provide('endpoints', stack.endpoints);
  project.provide('tableName', stack.tableName);
  project.provide('cursorSigningKey', process.env.CURSOR_SIGNING_KEY ?? '');
}

export async function teardown(): Promise<void> {
  await stack?.stop();
}
