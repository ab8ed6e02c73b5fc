import { startLocalStack } from './stack';
import { functionEnvironment, removeStackState, writeStackState } from './stack-state';

const HELP = `npm start — run the whole service locally (no AWS account, no Docker)

Starts DynamoDB Local (Java 17+), the SQS/S3 emulator (fauxqs) and the SES emulator
(aws-ses-v2-local); creates the table, queues and buckets; serves every route on
http://localhost:$PORT through the same handlers that run in Lambda; seeds a demo organization.

Environment (defaults in brackets):
  PORT [3000]                      port of the local API
  PLATFORM_ADMIN_TOKEN [generated] platform admin token (svc_pa_…)
  RATE_LIMIT_PER_MINUTE [1200]     requests a minute per credential
  DATA_DIR [unset: in memory]      where DynamoDB Local keeps data between runs, and the
                                   stream reader its position (stream-position.json): events
                                   committed before a stop or crash are fanned out after the
                                   restart. Jobs already queued (webhook deliveries and retries,
                                   purges) and exports are in memory (fauxqs) and do not survive
                                   a restart.
  SEED_DEMO [true]                 false: do not seed the demo organization
  DISCORD_API_BASE_URL [https://discord.com/api/v10], DISCORD_BOT_TOKEN
                                   where Discord calls go and the bot token they carry
  DISCORD_RETRY_SCHEDULE [10,60,300,900,3600]
                                   seconds between attempts of a failing Discord notification
  AI_PROVIDER_ALLOWED_TARGETS [localhost,127.0.0.1,[::1]]
                                   host:port (or a bare host: any port) AI provider probes may
                                   reach over http and without the public-address check
  AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL_SESV2
                                   use an endpoint you run instead of starting an emulator
While it runs, .local-data/local-stack.json tells \`npm run invoke\` where the stack is
(readable by you only: it holds the local tokens). Ctrl-C stops everything.`;

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    console.log(HELP);
    return;
  }
  const t0 = Date.now();
  const log = (line: string) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}`);
  log(`starting the local stack on Node ${process.version}…`);
  const stack = await startLocalStack({
    port: Number(process.env.PORT ?? 3000),
    dataDir: process.env.DATA_DIR,
    seedDemo: process.env.SEED_DEMO !== 'false',
    platformAdminToken: process.env.PLATFORM_ADMIN_TOKEN,
    progress: log,
  });

  const lines = [
    '',
    `Ready in ${((Date.now() - t0) / 1000).toFixed(1)} s — ${stack.baseUrl}`,
    `  API reference   ${stack.baseUrl}/api/docs`,
    `  OpenAPI         ${stack.baseUrl}/api/openapi.json`,
    `  Realtime        ${stack.baseUrl.replace(/^http/, 'ws')}/realtime?token=<operator session or visitor token>`,
    `  Sent e-mail     ${stack.endpoints.ses}/store`,
    '',
    `PLATFORM_ADMIN_TOKEN=${stack.platformAdminToken}`,
  ];
  if (stack.demo) {
    lines.push(
      `DEMO_ORG_ID=${stack.demo.organizationId}`,
      `DEMO_API_KEY=${stack.demo.apiKey}`,
      `DEMO_ADMIN_SESSION=${stack.demo.adminSession}`,
      `DEMO_VISITOR_TOKEN=${stack.demo.visitorToken}`,
      `DEMO_VISITOR_ID=${stack.demo.visitorId}`,
      `DEMO_WIDGET_KEY=${stack.demo.widgetKey}`,
      '',
      'Try:',
      `  curl -H "Authorization: Bearer ${stack.demo.apiKey}" ${stack.baseUrl}/api/me`,
    );
  }
  console.log(lines.join('\n'));
  // For `npm run invoke` and the SAM helper: where this stack is and what its functions run with.
  writeStackState({
    version: 1,
    pid: process.pid,
    startedAt: new Date().toISOString(),
    baseUrl: stack.baseUrl,
    endpoints: stack.endpoints,
    tableName: stack.tableName,
    platformAdminToken: stack.platformAdminToken,
    demo: stack.demo,
    env: functionEnvironment(),
    isolateSpecs: stack.isolateSpecs,
  });
  process.once('exit', () => removeStackState());

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping…`);
    removeStackState();
    await stack.stop();
    console.log('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
