/**
 * `npx tsx bench/projection-cost.ts`: µs per stored item turned into its resource, warm, for the
 * items a listing projects by the hundred (conversations, their stored state, messages).
 */
import { storedConversationOf, toConversation } from '../shared/db/conversations';
import { toMessage } from '../shared/db/messages';
import { conversationExample, messageExample } from '../shared/schemas/examples';

/** Items as DynamoDB reads them back: the documentation's examples beside storage attributes. */
const conversation = (n: number) => ({
  pk: `ORG#${conversationExample.organizationId}`,
  sk: `CONV#${n}`,
  gsi1pk: 'x',
  gsi1sk: 'y',
  entity: 'conversation',
  rev: 4,
  firstVisitorMessageAt: conversationExample.createdAt,
  ...conversationExample,
  id: String(n),
});

const message = (n: number) => ({
  pk: `ORG#${messageExample.orgId}#CONV#${messageExample.conversationId}`,
  sk: `MSG#${n}`,
  entity: 'message',
  editCount: 0,
  ...messageExample,
  id: String(n),
});

const ITEMS = 100;
const ROUNDS = 2_000;

function perItemUs(name: string, items: object[], project: (item: never) => unknown): void {
  let sink = 0;
  for (let round = 0; round < 200; round++) for (const item of items) sink ^= project(item as never) ? 1 : 0;
  const samples: number[] = [];
  for (let sample = 0; sample < 7; sample++) {
    const started = process.hrtime.bigint();
    for (let round = 0; round < ROUNDS; round++)
      for (const item of items) sink ^= project(item as never) ? 1 : 0;
    samples.push(Number(process.hrtime.bigint() - started) / 1_000 / (ROUNDS * items.length));
  }
  samples.sort((a, b) => a - b);
  console.log(
    `${name.padEnd(24)} ${(samples[3] ?? 0).toFixed(3)} µs per item (median of 7)${sink > 1 ? '' : ''}`,
  );
}

const conversations = Array.from({ length: ITEMS }, (_, n) => conversation(n));
const messages = Array.from({ length: ITEMS }, (_, n) => message(n));
perItemUs('toConversation', conversations, toConversation);
perItemUs('storedConversationOf', conversations, storedConversationOf);
perItemUs('toMessage', messages, toMessage);
