/**
 * Issue 27's volume rows, in their own process: the merge of a visitor with 1,000 conversations
 * and the erasure of a visitor with 10,000 messages. Seeds straight into DynamoDB Local with the
 * data layer's own items (`conversationItem`, `messageItem`), then runs the request's transaction
 * and the worker's steps in this process, as the visitor-jobs worker runs them (each page or step
 * bounded, each resumable), metered by `shared/db/meter.ts`: wall time, DynamoDB requests (round
 * trips), write and read units as DynamoDB Local reports them. In-process on purpose: the gateway's
 * per-request counter does not see a worker's background steps.
 *
 * Sizes: `--conversations=1000 --messages=10000` (the defaults). Prints `@@RESULT <json>`; with
 * `--report`, the report too: `npx tsx bench/contact-volume-main.ts --report`.
 */
import { type LocalStack, startLocalStack } from '../infra/local/stack';
import { reportContactVolume } from './contact-volume-report';
import { type ContactJobRun, type ContactVolumeResult, RESULT_MARKER } from './protocol';
import type { Verdict } from './report';

const say = (line: string) => console.log(`[bench]   ${line}`);
const argument = (name: string, fallback: number) =>
  Number(process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback);

export const CONVERSATIONS = argument('conversations', 1_000);
export const MESSAGES = argument('messages', 10_000);
/** The erased visitor's messages are spread over this many conversations. */
const ERASURE_CONVERSATIONS = 10;

let stack: LocalStack | undefined;

async function main(): Promise<ContactVolumeResult> {
  say('starting DynamoDB Local and the emulators (no workers: the steps run here)…');
  stack = await startLocalStack({
    port: 0,
    seedDemo: false,
    runWorkers: false,
    env: { POWERTOOLS_LOG_LEVEL: 'ERROR' },
  });
  const { organizations } = await import('../shared/db/organizations');
  const { visitors } = await import('../shared/db/visitors');
  const { batchPut } = await import('../shared/db/batch');
  const { conversationItem, newConversation } = await import('../shared/db/conversations');
  const { messageItem, newMessage } = await import('../shared/db/messages');
  const { withMessage } = await import('../shared/conversations/state');
  const { dynamoMeter } = await import('../shared/db/meter');
  const { visitorMerge } = await import('../shared/db/visitor-merge');
  const { visitorErasure } = await import('../shared/db/visitor-erasure');
  const { visitorErasureRequest } = await import('../shared/db/visitor-erasure-request');
  const { systemActor } = await import('../shared/db/org-audit');
  const { uuidv7 } = await import('../shared/ids');

  const organization = await organizations.create({
    name: 'bench contacts',
    modules: ['automation_api'],
    locales: ['en'],
    defaultLocale: 'en',
    historyWindowDays: null,
  });
  const orgId = organization.id;
  const visitor = async (identifier: string) =>
    (await visitors.createWithToken(orgId, { identifier, metadata: { plan: 'free' } }, 1)).visitor;

  /** Conversations of the visitor, each with `messagesEach` visitor messages; the items written in parallel batches. */
  async function seed(owner: Awaited<ReturnType<typeof visitor>>, count: number, messagesEach: number) {
    const items: Record<string, unknown>[] = [];
    for (let c = 0; c < count; c++) {
      const createdAt = new Date(Date.now() - 86_400_000).toISOString();
      let conversation = newConversation({
        id: uuidv7(),
        organizationId: orgId,
        visitor: owner,
        operatorId: null,
        status: 'open',
        priority: 'normal',
        source: 'api',
        snoozedUntil: null,
        createdAt,
        title: `Order ${c}`,
        tags: [],
        customFields: {},
        language: null,
        metadata: {},
      });
      for (let m = 0; m < messagesEach; m++) {
        const message = newMessage({
          orgId,
          conversationId: conversation.id,
          senderType: 'visitor',
          senderId: owner.id,
          content: `My order ${c}-${m} has not arrived, my address is 12 Example Street`,
          now: new Date(Date.parse(createdAt) + m).toISOString(),
        });
        conversation = withMessage(conversation, message);
        items.push(messageItem(message));
      }
      items.push(conversationItem(conversation));
    }
    const chunk = 25 * 8;
    for (let i = 0; i < items.length; i += chunk * 4)
      await Promise.all(
        Array.from({ length: 4 }, (_, part) =>
          batchPut(items.slice(i + part * chunk, i + (part + 1) * chunk)),
        ),
      );
  }

  const seedStarted = performance.now();
  const [target, source, erased] = await Promise.all([
    visitor('merge-target'),
    visitor('merge-source'),
    visitor('erased@example.com'),
  ]);
  say(`seeding ${CONVERSATIONS.toLocaleString('en')} conversations of the merge source…`);
  await seed(source, CONVERSATIONS, 0);
  say(`seeding ${MESSAGES.toLocaleString('en')} messages of the visitor to erase…`);
  await seed(erased, ERASURE_CONVERSATIONS, Math.ceil(MESSAGES / ERASURE_CONVERSATIONS));
  const seedMs = performance.now() - seedStarted;

  const measure = async (
    run: () => Promise<{ items: number; steps: number; beginMs: number }>,
  ): Promise<ContactJobRun> => {
    dynamoMeter.reset();
    const started = performance.now();
    const { items, steps, beginMs } = await run();
    const wallMs = performance.now() - started;
    const usage = dynamoMeter.current;
    return {
      items,
      steps,
      beginMs,
      wallMs,
      roundTrips: usage.commands,
      attempts: usage.attempts,
      writeUnits: usage.writeUnits,
      readUnits: usage.readUnits,
    };
  };

  say('merge: the request’s transaction, then the moves page by page…');
  const merge = await measure(async () => {
    const began = performance.now();
    await visitorMerge.begin(orgId, target.id, source.id, systemActor);
    const beginMs = performance.now() - began;
    let items = 0;
    let steps = 0;
    for (;;) {
      steps++;
      // As one worker invocation: its 60 s less the 15 s it keeps in hand.
      const progress = await visitorMerge.moveConversations(orgId, source.id, performance.now() + 45_000);
      items += progress.moved;
      if (progress.done) break;
    }
    return { items, steps, beginMs };
  });
  say(`merge: ${merge.items} conversations moved in ${(merge.wallMs / 1000).toFixed(1)} s`);

  say('erasure: the request’s transaction, then the steps…');
  const erasure = await measure(async () => {
    const began = performance.now();
    await visitorErasureRequest.begin(orgId, erased.id, systemActor);
    const beginMs = performance.now() - began;
    let items = 0;
    let steps = 0;
    let after: string | undefined;
    do {
      steps++;
      const step = await visitorErasure.eraseStep(orgId, erased.id, after);
      items += step.changed;
      after = step.next;
    } while (after);
    // The conversations' own items count among the changes: report messages only.
    return { items: items - ERASURE_CONVERSATIONS, steps, beginMs };
  });
  say(`erasure: ${erasure.items} messages blanked in ${(erasure.wallMs / 1000).toFixed(1)} s`);
  return { merge, erasure, seedMs };
}

let exitCode = 0;
try {
  const result = await main();
  console.log(`${RESULT_MARKER}${JSON.stringify(result)}`);
  if (process.argv.includes('--report')) {
    const verdicts: Verdict[] = [];
    reportContactVolume(result, verdicts);
    if (verdicts.some((verdict) => !verdict.ok)) exitCode = 1;
  }
} catch (error) {
  console.error(error);
  exitCode = 1;
} finally {
  await stack?.stop();
}
process.exit(exitCode);
