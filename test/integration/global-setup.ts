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
    webhookTestPorts: number[];
  }
}

/** Integration tests share one local stack: real emulators, the real local gateway, the real handlers. */
let stack: LocalStack | undefined;

export const RATE_LIMIT_PER_MINUTE = 600;
/** Local webhook receivers of the tests listen on these; only they are admitted over plain HTTP. */
export const WEBHOOK_TEST_PORTS = [47811, 47812, 47813, 47814];

export async function setup(project: TestProject): Promise<void> {
  stack = await startLocalStack({
    port: 0,
    seedDemo: false,
    env: {
      RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT_PER_MINUTE),
      POWERTOOLS_LOG_LEVEL: 'ERROR',
      WEBHOOK_ALLOWED_TARGETS: WEBHOOK_TEST_PORTS.map((port) => `127.0.0.1:${port}`).join(','),
      // Seconds: a failing receiver reaches `failed` in three attempts within a few seconds.
      WEBHOOK_RETRY_SCHEDULE: '1,1',
    },
  });
  project.provide('baseUrl', stack.baseUrl);
  project.provide('platformAdminToken', stack.platformAdminToken);
  project.provide('rateLimitPerMinute', RATE_LIMIT_PER_MINUTE);
  project.provide('endpoints', stack.endpoints);
  project.provide('tableName', stack.tableName);
  project.provide('cursorSigningKey', process.env.CURSOR_SIGNING_KEY ?? '');
  project.provide('webhookTestPorts', WEBHOOK_TEST_PORTS);
}

export async function teardown(): Promise<void> {
  await stack?.stop();
}
