/**
 * `npx tsx test/bench/projection-cost.ts`: µs per stored item turned into its resource, warm, for the
 * items a listing projects by the hundred (conversations, their stored state, messages).
 */
import { storedConversationOf, toConversation } from '../../shared/db/conversations';
import { toMessage } from '../../shared/db/messages';

const now = '2026-11-24T10:00:00.000Z';
const id = (n: number) => `0190a3c4-7e51-7000-8000-0000000000${String(n).padStart(2, '0')}`;

/** A conversation as DynamoDB reads it back: storage attributes, keys in no particular order. */
const conversation = (n: number) => ({
  pk: `ORG#${id(1)}`,
  sk: `CONV#${id(n)}`,
  gsi1pk: 'x',
  gsi1sk: 'y',
  entity: 'conversation',
  rev: 4,
  firstVisitorMessageAt: now,
  updatedAt: now,
  customFields: { plan: 'pro', account: 42 },
  visitor: {
    metadata: { tier: 'gold' },
    lastSeenAt: now,
    id: id(3),
    identifier: 'ada@example.com',
    fingerprint: null,
    geoCountry: null,
    geoCity: null,
    totalSessions: 1,
    firstSeenAt: now,
  },
  lastMessage: {
    createdAt: now,
    content: 'Where?',
    id: id(4),
    senderType: 'visitor',
    senderId: id(3),
    type: 'text',
  },
  id: id(n),
  organizationId: id(1),
  visitorId: id(3),
  operatorId: null,
  teamId: null,
  status: 'open',
  priority: 'normal',
  source: 'api',
  aiEnabled: false,
  snoozedUntil: null,
  lastMessageAt: now,
  title: 'Where is my order?',
  messageCount: 1,
  unreadCount: 1,
  hasUnreadMessages: true,
  tags: ['billing'],
  language: 'en',
  aiSummary: null,
  aiSummaryGeneratedAt: null,
  aiClassification: null,
  metadata: { zeta: 1, alpha: 2 },
  version: 4,
  createdAt: now,
  firstResponseTimeMs: null,
});

const message = (n: number) => ({
  pk: `ORG#${id(1)}#CONV#${id(2)}`,
  sk: `MSG#${id(n)}`,
  entity: 'message',
  editCount: 0,
  id: id(n),
  orgId: id(1),
  conversationId: id(2),
  senderType: 'visitor',
  senderId: id(3),
  content: 'Hello',
  type: 'text',
  metadata: {},
  isRead: false,
  isEdited: false,
  editedAt: null,
  createdAt: now,
  deletedAt: null,
  replyToId: null,
  mentions: null,
  searchVector: 'hello',
  attachments: [],
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
