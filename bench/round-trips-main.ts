/**
 * Phase 4, in its own process (the functions read their configuration once, at import, from what
 * the local stack sets): starts the local stack in-process, counts DynamoDB round trips per request,
 * stops the stack (DynamoDB Local's JVM included), then prints `@@RESULT <json>`.
 *
 * Standalone: `npx tsx bench/round-trips-main.ts` (`--report` also prints the phase's tables).
 */
import { freePort } from '../infra/local/ports';
import { type LocalStack, startLocalStack } from '../infra/local/stack';
import { type FakeDiscord, startFakeDiscord } from '../test/helpers/fake-discord';
import { type FakeOpenAi, startFakeOpenAi } from '../test/helpers/fake-openai';
import { RESULT_MARKER } from './protocol';
import { MISS, PASS, type Verdict } from './report';
import { measureRoundTrips } from './round-trips';
import { reportRoundTrips } from './round-trips-report';

const say = (line: string) => console.log(`[bench]   ${line}`);

let stack: LocalStack | undefined;
let discord: FakeDiscord | undefined;
let openAi: FakeOpenAi | undefined;

async function stop(): Promise<void> {
  const running = stack;
  stack = undefined;
  await discord?.close();
  await openAi?.close();
  discord = undefined;
  openAi = undefined;
  if (!running) return;
  say('stopping the local stack…');
  await running.stop();
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void stop().finally(() => process.exit(130));
  });
}

let exitCode = 0;
try {
  const started = Date.now();
  say('starting the local stack (DynamoDB Local, SQS/S3, SES, gateway)…');
  // Webhooks of the scenarios point here: allow-listed, nothing listens, so attempts fail at once
  // and, with one immediate retry, a delivery is `failed` within moments (the retry scenario needs that).
  const deadWebhookPort = await freePort();
  // Discord and the AI provider are local fakes (their exchanges are not DynamoDB round trips).
  discord = await startFakeDiscord({ token: 'bench-discord-bot-token' });
  openAi = await startFakeOpenAi();
  stack = await startLocalStack({
    port: 0,
    seedDemo: true,
    env: {
      POWERTOOLS_LOG_LEVEL: 'ERROR',
      // AWS's auth cache (the local stack's default is 0: a change shows at once in every function):
      // a warm request reads no credential, as a warm Lambda instance's does not.
      AUTH_CACHE_TTL_MS: '10000',
      WEBHOOK_ALLOWED_TARGETS: `127.0.0.1:${deadWebhookPort}`,
      WEBHOOK_RETRY_SCHEDULE: '0',
      DISCORD_API_BASE_URL: discord.baseUrl,
      DISCORD_BOT_TOKEN: 'bench-discord-bot-token',
      AI_PROVIDER_ALLOWED_TARGETS: new URL(openAi.baseUrl).host,
    },
    progress: (line) => say(`  ${line}`),
  });
  say(`local stack ready in ${((Date.now() - started) / 1000).toFixed(1)} s at ${stack.baseUrl}`);
  const report = await measureRoundTrips(stack, say, {
    deadWebhookTarget: `http://127.0.0.1:${deadWebhookPort}/hooks`,
    fakeDiscordUrl: discord.baseUrl,
    fakeOpenAiUrl: openAi.baseUrl,
  });
  await stop();
  console.log(`${RESULT_MARKER}${JSON.stringify(report)}`);
  if (process.argv.includes('--report')) {
    const verdicts: Verdict[] = [];
    reportRoundTrips(report, undefined, verdicts);
    const misses = verdicts.filter((verdict) => !verdict.ok);
    console.log('');
    for (const miss of misses) console.log(`  ${MISS} ${miss.what}: ${miss.detail}`);
    console.log(
      `${misses.length ? MISS : PASS} round trips: ${verdicts.length - misses.length}/${verdicts.length} targets met`,
    );
  }
} catch (error) {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  exitCode = 1;
} finally {
  await stop().catch((error: unknown) => {
    console.error('stopping the local stack failed', error);
  });
}
// SDK keep-alive sockets and emulator leftovers must not hold the bench open.
process.exit(exitCode);
