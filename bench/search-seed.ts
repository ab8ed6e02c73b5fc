/**
 * Seeds a large tenant for the search phase, fast. The items are the data layer's own
 * (`conversationItem`, `messageItem` of `newMessage`, each conversation's state after each message
 * by `withMessage`), and the index rows are what the stream worker would write for them: the same
 * projection (`rowsOfItem`) and the same writer (`writeRows`), in batches of a few thousand rows
 * instead of one stream batch at a time. Messages go only into the index (DynamoDB Local would take
 * hours for a million of them, one BatchWriteItem of 25 at a time); the conversations also go into
 * the table, which the search function reads for every hit (`putConversations`, timed on its own).
 * Deterministic (a seeded generator): two runs of the same size write the same text.
 */
import type pg from 'pg';
import { withMessage } from '../shared/conversations/state';
import { batchPut } from '../shared/db/batch';
import { conversationItem, newConversation } from '../shared/db/conversations';
import { messageItem, newMessage } from '../shared/db/messages';
import { uuidv7 } from '../shared/ids';
import type { Visitor } from '../shared/schemas/visitor';
import { type IndexRow, rowsOfItem } from '../shared/search/projection';
import { writeRows } from '../shared/search/writer';
import { generator, PRIORITIES, STATUSES, TAGS } from './export-volume-seed';

/** Words of support chats: each of them is in a good share of the messages. */
export const COMMON_WORDS = (
  'order delivery package refund invoice account password login payment card shipping address ' +
  'tracking number warehouse return exchange size colour discount coupon subscription plan upgrade ' +
  'cancel renewal support ticket issue problem question answer thanks hello please today tomorrow ' +
  'yesterday week received missing damaged broken late early confirm update change email phone ' +
  'the a to and of for is it my your we you can not was have this that with on in be will'
).split(' ');

const SYLLABLES = 'ka lo mi ne ru sa to vi ze bo du fa gi ho ju ke la mo nu pi'.split(' ');
/**
 * 8,000 made-up words (three syllables): product names, order references, people's names; one in
 * ten words of a message is one of them, so each is in about one message in 5,000.
 */
export const RARE_WORDS = SYLLABLES.flatMap((a) =>
  SYLLABLES.flatMap((b) => SYLLABLES.map((c) => `${a}${b}${c}`)),
);

export interface SearchVolumePlan {
  orgId: string;
  messages: number;
  conversations: number;
  visitors: readonly Visitor[];
  operatorIds: readonly string[];
  pool: pg.Pool;
  /** writeRows calls in flight (the pool must allow as many connections). */
  parallel: number;
  progress: (line: string) => void;
}

export interface SeededSearchVolume {
  conversations: number;
  messages: number;
  rows: number;
  ms: number;
  /** The conversations' table items, as JSON, by id, for `putConversations`. */
  conversationItems: Map<string, string>;
}

const ROWS_PER_WRITE = 2_000;

/** Runs at most `parallel` tasks at once; `drain` waits for all and rethrows the first failure. */
function limiter(parallel: number) {
  const inFlight = new Set<Promise<void>>();
  let failure: unknown;
  return {
    async run(task: () => Promise<void>): Promise<void> {
      if (failure) throw failure;
      while (inFlight.size >= parallel) await Promise.race(inFlight);
      const running: Promise<void> = task()
        .catch((error: unknown) => {
          failure ??= error;
        })
        .finally(() => inFlight.delete(running));
      inFlight.add(running);
    },
    async drain(): Promise<void> {
      await Promise.all(inFlight);
      if (failure) throw failure;
    },
  };
}

/** Writes the index rows of `plan.messages` messages in `plan.conversations` conversations. */
export async function seedSearchVolume(plan: SearchVolumePlan): Promise<SeededSearchVolume> {
  const started = Date.now();
  const random = generator(0x5ea4c4);
  const text = () => {
    // Mostly short chat lines, sometimes a paragraph.
    const count = random.int(10) === 0 ? 40 + random.int(60) : 3 + random.int(25);
    const words: string[] = [];
    for (let i = 0; i < count; i++)
      words.push(random.int(10) === 0 ? random.pick(RARE_WORDS) : random.pick(COMMON_WORDS));
    const line = words.join(' ');
    return `${line.charAt(0).toUpperCase()}${line.slice(1)}${random.pick(['.', '?', '!', '.'])}`;
  };
  const writes = limiter(plan.parallel);
  let pending: IndexRow[] = [];
  let rows = 0;
  let written = 0;
  let lastReport = started;
  const flush = async () => {
    const batch = pending;
    pending = [];
    rows += batch.length;
    if (batch.length > 0) await writes.run(() => writeRows(plan.pool, batch));
  };
  const conversationItems = new Map<string, string>();
  const nowMs = Date.now();
  const windowMs = 60 * 86_400_000;
  const base = Math.floor(plan.messages / plan.conversations);
  let extra = plan.messages - base * plan.conversations;
  for (let index = 0; index < plan.conversations; index++) {
    const count = base + (extra-- > 0 ? 1 : 0);
    const visitor = random.pick(plan.visitors);
    const operatorId = random.int(5) === 0 ? null : random.pick(plan.operatorIds);
    let at = nowMs - windowMs + random.int(windowMs / 2);
    const status = random.pick(STATUSES);
    const id = uuidv7(at);
    let conversation = newConversation({
      id,
      organizationId: plan.orgId,
      visitor,
      operatorId,
      status,
      priority: random.pick(PRIORITIES),
      source: 'widget',
      snoozedUntil: status === 'snoozed' ? new Date(nowMs + 86_400_000).toISOString() : null,
      createdAt: new Date(at).toISOString(),
      title: 'New conversation',
      tags: TAGS.filter(() => random.int(4) === 0),
      customFields: {},
      language: 'en',
      metadata: {},
    });
    for (let i = 0; i < count; i++) {
      const fromVisitor = operatorId === null || i % 2 === 0;
      const message = newMessage({
        orgId: plan.orgId,
        conversationId: id,
        senderType: fromVisitor ? 'visitor' : 'operator',
        senderId: fromVisitor ? visitor.id : (operatorId ?? visitor.id),
        content: text(),
        now: new Date(at).toISOString(),
      });
      message.isRead = true;
      if (i === 0) conversation.title = message.content.slice(0, 80);
      conversation = withMessage(conversation, message);
      pending.push(...rowsOfItem(messageItem(message)));
      at += 20_000 + random.int(580_000);
      written++;
    }
    const item = conversationItem({ ...conversation, rev: count + 1 });
    pending.push(...rowsOfItem(item));
    conversationItems.set(id, JSON.stringify(item));
    if (pending.length >= ROWS_PER_WRITE) await flush();
    if (Date.now() - lastReport >= 15_000) {
      lastReport = Date.now();
      const seconds = (lastReport - started) / 1000;
      plan.progress(
        `indexed ${written.toLocaleString('en')}/${plan.messages.toLocaleString('en')} messages, ${(index + 1).toLocaleString('en')}/${plan.conversations.toLocaleString('en')} conversations (${Math.round(written / seconds).toLocaleString('en')} messages/s)`,
      );
    }
  }
  await flush();
  await writes.drain();
  return {
    conversations: plan.conversations,
    messages: written,
    rows,
    ms: Date.now() - started,
    conversationItems,
  };
}

/** Puts the conversations' items into the table with BatchWriteItem (25 a call, `parallel` calls in flight). */
export async function putConversations(
  items: readonly string[],
  parallel: number,
  progress: (line: string) => void,
): Promise<number> {
  const started = Date.now();
  const writes = limiter(parallel);
  let lastReport = started;
  for (let start = 0; start < items.length; start += 25) {
    const batch = items.slice(start, start + 25).map((item) => JSON.parse(item) as Record<string, unknown>);
    await writes.run(() => batchPut(batch));
    if (Date.now() - lastReport >= 15_000) {
      lastReport = Date.now();
      progress(
        `put ${start.toLocaleString('en')}/${items.length.toLocaleString('en')} conversations into the table`,
      );
    }
  }
  await writes.drain();
  return Date.now() - started;
}
