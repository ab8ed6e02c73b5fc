/**
 * Seeds an organization with many conversations and messages for the export-volume phase, fast:
 * the items are the data layer's own (`conversationItem`, `messageItem` of `newMessage`, the state
 * after each message by `withMessage`, so every listing attribute the export reads is there),
 * written directly with BatchWriteItem (25 a call, several calls in flight) instead of one
 * transaction per message through the API. Deterministic (a seeded generator): two runs of the same
 * size write the same text, so figures compare.
 */
import { withMessage } from '../shared/conversations/state';
import { batchPut } from '../shared/db/batch';
import { conversationItem, newConversation } from '../shared/db/conversations';
import { messageItem, newMessage } from '../shared/db/messages';
import { uuidv7 } from '../shared/ids';
import type { Conversation } from '../shared/schemas/conversation';
import type { Visitor } from '../shared/schemas/visitor';

export interface VolumePlan {
  orgId: string;
  /** Messages in all (the long conversation's included). */
  messages: number;
  /** Conversations besides the long one. */
  conversations: number;
  /** The long conversation (the PDF transcript's): this many messages, several Query pages. */
  longConversationMessages: number;
  operatorIds: readonly string[];
  visitors: readonly Visitor[];
  /** BatchWriteItem calls in flight. */
  parallel: number;
  progress: (line: string) => void;
}

export interface SeededVolume {
  conversations: number;
  messages: number;
  longConversationId: string;
  items: number;
  ms: number;
}

/** mulberry32: a small seeded generator, so every run writes the same data. */
export function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (below: number) => Math.floor(next() * below),
    pick: <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)] as T,
  };
}

const WORDS = (
  'order delivery package refund invoice account password login payment card shipping address ' +
  'tracking number warehouse return exchange size colour discount coupon subscription plan upgrade ' +
  'cancel renewal support ticket issue problem question answer thanks hello please today tomorrow ' +
  'yesterday week received missing damaged broken late early confirm update change email phone ' +
  'the a to and of for is it my your we you can not was have this that with on in be will'
).split(' ');
/** Text a spreadsheet or a CSV writer must treat with care, now and then. */
const AWKWARD = [
  '=SUM(A1:A9) looks like a formula',
  '+49 is not a formula either',
  '-1 item short',
  '@mention someone',
  'a "quoted" word, and a comma',
  'two lines\nof text',
  'ümlauts, émojis 🙂 and 中文',
];

function messageText(random: ReturnType<typeof generator>): string {
  if (random.int(20) === 0) return random.pick(AWKWARD);
  // Mostly short chat lines, sometimes a paragraph (20–600 characters).
  const words = random.int(10) === 0 ? 40 + random.int(60) : 3 + random.int(25);
  const parts: string[] = [];
  for (let i = 0; i < words; i++) parts.push(random.pick(WORDS));
  const text = parts.join(' ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}${random.pick(['.', '?', '!', '.'])}`;
}

/** Messages per conversation: uneven (0.2–1.8 × the mean), summing exactly to `total`. */
function spread(total: number, conversations: number, random: ReturnType<typeof generator>): number[] {
  const weights = Array.from({ length: conversations }, () => 0.2 + random.next() * 1.6);
  const sum = weights.reduce((a, b) => a + b, 0);
  const counts = weights.map((weight) => Math.max(1, Math.floor((weight / sum) * total)));
  let rest = total - counts.reduce((a, b) => a + b, 0);
  for (let i = 0; rest !== 0; i = (i + 1) % conversations) {
    const count = counts[i] ?? 1;
    if (rest > 0) {
      counts[i] = count + 1;
      rest--;
    } else if (count > 1) {
      counts[i] = count - 1;
      rest++;
    }
  }
  return counts;
}

/** Runs at most `parallel` writes at once; `drain` waits for all. */
function writer(parallel: number) {
  const inFlight = new Set<Promise<void>>();
  let failure: unknown;
  return {
    async put(items: Record<string, unknown>[]): Promise<void> {
      if (failure) throw failure;
      while (inFlight.size >= parallel) await Promise.race(inFlight);
      const write: Promise<void> = batchPut(items)
        .catch((error: unknown) => {
          failure ??= error;
        })
        .finally(() => inFlight.delete(write));
      inFlight.add(write);
    },
    async drain(): Promise<void> {
      await Promise.all(inFlight);
      if (failure) throw failure;
    },
  };
}

/** The mix of seeded conversations (the search bench seeds the same). */
export const STATUSES: readonly Conversation['status'][] = [
  'open',
  'open',
  'pending',
  'closed',
  'closed',
  'snoozed',
];
export const PRIORITIES: readonly Conversation['priority'][] = [
  'low',
  'normal',
  'normal',
  'normal',
  'high',
  'urgent',
];
export const TAGS = ['billing', 'shipping', 'vip', 'refund', 'bug', 'feedback'];

export async function seedVolume(plan: VolumePlan): Promise<SeededVolume> {
  const started = Date.now();
  const random = generator(0x5eed);
  const counts = [
    plan.longConversationMessages,
    ...spread(plan.messages - plan.longConversationMessages, plan.conversations, random),
  ];
  const out = writer(plan.parallel);
  const nowMs = Date.now();
  // Conversations start within the last 60 days; messages follow 20 s – 10 min apart.
  const windowMs = 60 * 86_400_000;
  let written = 0;
  let items = 0;
  let lastReport = started;
  let longConversationId = '';
  let batch: Record<string, unknown>[] = [];
  const emit = async (item: Record<string, unknown>) => {
    batch.push(item);
    items++;
    if (batch.length === 25) {
      const full = batch;
      batch = [];
      await out.put(full);
    }
  };

  for (const [index, count] of counts.entries()) {
    const visitor = random.pick(plan.visitors);
    const operatorId = random.int(5) === 0 ? null : random.pick(plan.operatorIds);
    // Oldest first, so the long conversation (index 0) ends well before now.
    let at = nowMs - windowMs + random.int(windowMs / 2);
    const status = random.pick(STATUSES);
    const createdAt = new Date(at).toISOString();
    const id = uuidv7(at);
    if (index === 0) longConversationId = id;
    let conversation = newConversation({
      id,
      organizationId: plan.orgId,
      visitor,
      operatorId,
      status,
      priority: random.pick(PRIORITIES),
      source: random.int(3) === 0 ? 'api' : 'widget',
      snoozedUntil: status === 'snoozed' ? new Date(nowMs + 86_400_000).toISOString() : null,
      createdAt,
      title: 'New conversation',
      tags: TAGS.filter(() => random.int(4) === 0),
      customFields: {},
      language: random.int(2) === 0 ? 'en' : null,
      metadata: {},
    });
    for (let i = 0; i < count; i++) {
      const fromVisitor = operatorId === null || i % 2 === 0;
      const message = newMessage({
        orgId: plan.orgId,
        conversationId: id,
        senderType: fromVisitor ? 'visitor' : 'operator',
        senderId: fromVisitor ? visitor.id : (operatorId ?? visitor.id),
        content: messageText(random),
        now: new Date(at).toISOString(),
      });
      // Read, except a visitor's last words in an open conversation.
      message.isRead = !(fromVisitor && i === count - 1 && status === 'open');
      if (i === 0) conversation.title = message.content.slice(0, 80);
      conversation = withMessage(conversation, message);
      await emit(messageItem(message));
      at += 20_000 + random.int(580_000);
      written++;
    }
    await emit(conversationItem({ ...conversation, rev: count + 1 }));
    if (Date.now() - lastReport >= 10_000) {
      lastReport = Date.now();
      const seconds = (lastReport - started) / 1000;
      plan.progress(
        `seeded ${written.toLocaleString('en')}/${plan.messages.toLocaleString('en')} messages, ${index + 1}/${counts.length} conversations (${Math.round(written / seconds).toLocaleString('en')} messages/s)`,
      );
    }
  }
  if (batch.length) await out.put(batch);
  await out.drain();
  return {
    conversations: counts.length,
    messages: written,
    longConversationId,
    items,
    ms: Date.now() - started,
  };
}
