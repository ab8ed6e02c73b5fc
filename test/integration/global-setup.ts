import type { TestProject } from 'vitest/node';
import { type LocalStack, startLocalStack } from '../../infra/local/stack';
import { type FakeDiscord, startFakeDiscord } from '../helpers/fake-discord';
import { type FakeOpenAi, startFakeOpenAi } from '../helpers/fake-openai';
import { freePorts } from '../helpers/free-ports';

declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
    platformAdminToken: string;
    rateLimitPerMinute: number;
    endpoints: Record<string, string>;
    tableName: string;
    cursorSigningKey: string;
    webhookTestPorts: number[];
    /** A fake of Discord's API (test/helpers/fake-discord.ts), where DISCORD_API_BASE_URL points. */
    fakeDiscordUrl: string;
    discordBotToken: string;
    /** A fake OpenAI-compatible API (test/helpers/fake-openai.ts), admitted for AI provider probes. */
    fakeOpenAiUrl: string;
    aiProviderProbeTimeoutMs: number;
    /** The shared stack's functions, as `npm run invoke` attaches to them. */
    isolateSpecs: import('../../infra/local/runtime').FunctionSpec[];
  }
}

/** Integration tests share one local stack: real emulators, the real local gateway, the real handlers. */
let stack: LocalStack | undefined;
let discord: FakeDiscord | undefined;
let openAi: FakeOpenAi | undefined;

/** The contract's default: one platform admin credential carries the setup calls of every test file. */
export const RATE_LIMIT_PER_MINUTE = 1200;

export const DISCORD_BOT_TOKEN = 'test-discord-bot-token';
/** Short, so a probe that times out does so within a test. */
export const AI_PROVIDER_PROBE_TIMEOUT_MS = 1_500;

export async function setup(project: TestProject): Promise<void> {
  // Port 0: the fakes get free ports and the service finds them through its configuration.
  discord = await startFakeDiscord({ token: DISCORD_BOT_TOKEN });
  openAi = await startFakeOpenAi();
  // Local webhook receivers of the tests listen on these; only they are admitted over plain HTTP.
  const webhookTestPorts = await freePorts(5);
  stack = await startLocalStack({
    port: 0,
    seedDemo: false,
    env: {
      RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT_PER_MINUTE),
      POWERTOOLS_LOG_LEVEL: 'ERROR',
      WEBHOOK_ALLOWED_TARGETS: webhookTestPorts.map((port) => `127.0.0.1:${port}`).join(','),
      // Seconds: a failing receiver reaches `failed` in three attempts within a few seconds.
      WEBHOOK_RETRY_SCHEDULE: '1,1',
      DISCORD_API_BASE_URL: discord.baseUrl,
      DISCORD_BOT_TOKEN,
      DISCORD_RETRY_SCHEDULE: '1,1',
      // Only the fake: the guard still refuses every other non-public target.
      AI_PROVIDER_ALLOWED_TARGETS: new URL(openAi.baseUrl).host,
      AI_PROVIDER_PROBE_TIMEOUT_MS: String(AI_PROVIDER_PROBE_TIMEOUT_MS),
      // Each function instance writes its metered usage every 3 s (10 s by default): every busy
      // function's flush is a transaction, which a shorter interval multiplies across the suite.
      USAGE_FLUSH_MS: '3000',
    },
  });
  project.provide('baseUrl', stack.baseUrl);
  project.provide('platformAdminToken', stack.platformAdminToken);
  project.provide('rateLimitPerMinute', RATE_LIMIT_PER_MINUTE);
  project.provide('endpoints', stack.endpoints);
  project.provide('tableName', stack.tableName);
  project.provide('cursorSigningKey', process.env.CURSOR_SIGNING_KEY ?? '');
  project.provide('webhookTestPorts', webhookTestPorts);
  project.provide('fakeDiscordUrl', discord.baseUrl);
  project.provide('discordBotToken', DISCORD_BOT_TOKEN);
  project.provide('fakeOpenAiUrl', openAi.baseUrl);
  project.provide('aiProviderProbeTimeoutMs', AI_PROVIDER_PROBE_TIMEOUT_MS);
  project.provide('isolateSpecs', stack.isolateSpecs);
}

export async function teardown(): Promise<void> {
  await stack?.stop();
  await discord?.close();
  await openAi?.close();
}
