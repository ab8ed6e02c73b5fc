/**
 * Phase 5, in its own process (the functions read WEBHOOK_ALLOWED_TARGETS and the retry schedule
 * once, at import): (a) µs per signature, before anything else runs; then the local stack with a
 * local receiver (its own process) on an allowed port, (b) deliveries per second end to end and
 * (c) event-to-delivery latency. Stops the stack (DynamoDB Local's JVM included) and the receiver,
 * then prints `@@RESULT <json>`.
 *
 * Standalone: `npx tsx bench/webhook-delivery-main.ts`.
 */
import { freePort } from '../infra/local/ports';
import { type LocalStack, startLocalStack } from '../infra/local/stack';
import { RESULT_MARKER, type WebhookDeliveryResult } from './protocol';
import { Probe } from './webhook-probe';
import { type ReceiverHandle, startReceiver } from './webhook-receiver-handle';
import { measureSigning } from './webhook-signing';
import { measureThroughput } from './webhook-throughput';

const WEBHOOKS = 20;
const CONVERSATIONS = 100;
const PARALLEL = 4;
const DELIVERY_TIMEOUT_MS = 90_000;

const say = (line: string) => console.log(`[bench]   ${line}`);
const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

let stack: LocalStack | undefined;
let receiver: ReceiverHandle | undefined;
// The local stack reads the stream once for every stream worker: the fan-out's reads are that reader's.
const probe = new Probe(0);

async function stop(): Promise<void> {
  const running = stack;
  const listening = receiver;
  stack = undefined;
  receiver = undefined;
  if (running) {
    say('stopping the local stack…');
    await running.stop();
  }
  if (listening) await listening.close();
  probe.uninstall();
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void stop().finally(() => process.exit(130));
  });
}

const result: WebhookDeliveryResult = {};
let exitCode = 0;
try {
  try {
    result.signing = await measureSigning(say);
  } catch (error) {
    result.signingError = message(error);
  }

  try {
    const port = await freePort();
    receiver = await startReceiver(port);
    say(`receiver listening on 127.0.0.1:${port} (pid ${receiver.pid}, its own process)`);
    probe.wrapClients(() => process.env.WEBHOOK_DELIVERY_QUEUE_URL);
    const started = Date.now();
    say('starting the local stack (DynamoDB Local, SQS/S3, SES, gateway, workers)…');
    stack = await startLocalStack({
      port: 0,
      seedDemo: true,
      env: {
        POWERTOOLS_LOG_LEVEL: 'ERROR',
        WEBHOOK_ALLOWED_TARGETS: `127.0.0.1:${port}`,
        WEBHOOK_RETRY_SCHEDULE: '1,1',
      },
      progress: (line) => say(`  ${line}`),
    });
    say(`local stack ready in ${((Date.now() - started) / 1000).toFixed(1)} s at ${stack.baseUrl}`);
    const { dynamo } = await import('../shared/db/client');
    probe.instrumentTable(dynamo);
    result.throughput = await measureThroughput({
      stack,
      receiver,
      probe,
      webhooks: WEBHOOKS,
      conversations: CONVERSATIONS,
      parallel: PARALLEL,
      timeoutMs: DELIVERY_TIMEOUT_MS,
      whatIf: { pollers: 10, conversations: 50 },
      profileConversations: 25,
      log: say,
    });
  } catch (error) {
    result.throughputError = message(error);
  }
  await stop();
  console.log(`${RESULT_MARKER}${JSON.stringify(result)}`);
} catch (error) {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  exitCode = 1;
} finally {
  await stop().catch((error: unknown) => {
    console.error('stopping failed', error);
  });
}
// SDK keep-alive sockets and emulator leftovers must not hold the bench open.
process.exit(exitCode);
