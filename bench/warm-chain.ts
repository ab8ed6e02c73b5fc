/**
 * Phase 3, in its own process (config is read once, at import): warm µs per request through the
 * whole middleware chain of the conversations function for `GET /api/conversations/{id}`, DynamoDB
 * stubbed with aws-sdk-client-mock. Prints progress lines, then one `@@RESULT <json>` line.
 *
 * Standalone: `node --expose-gc --import tsx bench/warm-chain.ts` (without --expose-gc it
 * still runs, just without a collection before each timed loop).
 */
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { functionEnv } from './options';
import { type Distribution, RESULT_MARKER, type WarmChainResult } from './protocol';
import { percentile } from './report';

const WARMUP = 2_000;
const REQUESTS = 20_000;

// Before any project module loads: config and the logger read the environment at import.
Object.assign(process.env, {
  ...functionEnv,
  // A lease of 2,000,000 requests: one UpdateItem per minute window, none in the measured loop.
  RATE_LIMIT_PER_MINUTE: '100000000',
  // Judged without log lines; the bench also runs it at INFO (BENCH_LOG_LEVEL), the stack's default.
  POWERTOOLS_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'SILENT',
  // Steady state: the 10 s default would put a BatchGetItem in the loop whenever a run passes 10 s.
  AUTH_CACHE_TTL_MS: '3600000',
});

const say = (line: string) => console.log(`[bench]   ${line}`);

const { keys } = await import('../shared/db/keys');
const { mintOrgToken } = await import('../shared/auth/tokens');
const { uuidv7 } = await import('../shared/ids');
const { lambdaContext, proxyEvent } = await import('../infra/local/lambda-event');
const tableName = process.env.TABLE_NAME ?? 'bench-table';

// The stored items, shaped as the data layer writes them.
const now = new Date().toISOString();
const orgId = uuidv7();
const minted = mintOrgToken('apiKey', orgId);
const organization = {
  id: orgId,
  name: 'Bench org',
  modules: ['automation_api'],
  locales: ['en'],
  defaultLocale: 'en',
  historyWindowDays: null,
  widgetKey: mintOrgToken('widgetKey', orgId).token,
  chatbot: {
    enabled: false,
    schedule: null,
    knowledgeThreshold: 0.35,
    rules: [],
    intentPolicies: [],
    updatedAt: '2026-11-01T08:00:00.000Z',
  },
  createdAt: now,
  updatedAt: now,
};
const credentialItem = {
  ...keys.apiKey(orgId, minted.credentialId),
  entity: 'apiKey',
  kind: 'apiKey',
  id: minted.credentialId,
  orgId,
  hash: minted.hash,
  revokedAt: null,
  name: 'bench',
  scopes: [],
  createdAt: now,
};
const organizationItem = {
  ...keys.organization(orgId),
  ...keys.organizationListing(now, orgId),
  entity: 'organization',
  ...organization,
};
const conversationId = uuidv7();
const visitorId = uuidv7();
const conversation = {
  id: conversationId,
  organizationId: orgId,
  visitorId,
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
  customFields: { plan: 'pro' },
  language: 'en',
  aiSummary: null,
  aiSummaryGeneratedAt: null,
  aiClassification: null,
  metadata: {},
  version: 1,
  createdAt: now,
  updatedAt: now,
  visitor: {
    id: visitorId,
    identifier: 'ada@example.com',
    fingerprint: null,
    geoCountry: null,
    geoCity: null,
    totalSessions: 1,
    firstSeenAt: now,
    lastSeenAt: now,
    metadata: {},
  },
  lastMessage: {
    id: uuidv7(),
    senderType: 'visitor',
    senderId: visitorId,
    type: 'text',
    content: 'Where is my order?',
    createdAt: now,
  },
  firstResponseTimeMs: null,
};
const conversationItem = {
  ...keys.conversation(orgId, conversationId),
  ...keys.conversationIndexes({ orgId, ...conversation }),
  entity: 'conversation',
  ...conversation,
  firstVisitorMessageAt: now,
};

const ddb = mockClient(DynamoDBDocumentClient);
ddb.on(GetCommand).resolves({ Item: conversationItem });
ddb.on(BatchGetCommand).resolves({ Responses: { [tableName]: [credentialItem, organizationItem] } });
ddb.on(UpdateCommand).resolves({ Attributes: { used: 1 } });

const { handler } = await import('../functions/conversations/handler');
const { db } = await import('../shared/db/client');

const path = `/api/conversations/${conversationId}`;
const event: APIGatewayProxyEvent = proxyEvent({
  method: 'GET',
  resource: '/api/conversations/{id}',
  path,
  pathParameters: { id: conversationId },
  headers: {
    Authorization: `Bearer ${minted.token}`,
    Accept: 'application/json',
    Host: 'api.example.com',
    'User-Agent': 'bench/1.0',
    'X-Forwarded-For': '203.0.113.7',
  },
  requestId: 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
  sourceIp: '203.0.113.7',
});
const context = lambdaContext('bench-conversations');

const gc = (globalThis as { gc?: () => void }).gc;

function distribution(samplesUs: Float64Array): Distribution {
  let sum = 0;
  for (const sample of samplesUs) sum += sample;
  const sorted = Float64Array.from(samplesUs).sort();
  return { meanUs: sum / samplesUs.length, p50Us: percentile(sorted, 50), p99Us: percentile(sorted, 99) };
}

const first = await handler(event, context);
if (first.statusCode !== 200) {
  throw new Error(`GET ${path} answered ${first.statusCode}: ${first.body}`);
}

/** Sends since the last call. Sinon keeps every call: draining it often keeps its GC cost flat. */
type SendCounter = () => number;
const mockSends: SendCounter = () => {
  const count = ddb.calls().length;
  ddb.resetHistory();
  return count;
};
const DRAIN_EVERY = 1_000;

/** Warm-up, then `REQUESTS` individually timed runs; counting and draining happen between timings. */
async function timeLoop(
  once: () => Promise<boolean>,
  sends: SendCounter,
): Promise<{ samplesUs: Float64Array; sends: number; failures: number }> {
  for (let i = 0; i < WARMUP; i++) await once();
  sends();
  gc?.();
  const samplesUs = new Float64Array(REQUESTS);
  let total = 0;
  let failures = 0;
  for (let i = 0; i < REQUESTS; i++) {
    const started = process.hrtime.bigint();
    const ok = await once();
    samplesUs[i] = Number(process.hrtime.bigint() - started) / 1_000;
    if (!ok) failures += 1;
    if ((i + 1) % DRAIN_EVERY === 0) total += sends();
  }
  total += sends();
  return { samplesUs, sends: total, failures };
}

const request = async () => (await handler(event, context)).statusCode === 200;

say(
  `aws-sdk-client-mock stub: ${WARMUP.toLocaleString('en')} warm-up + ${REQUESTS.toLocaleString('en')} timed requests…`,
);
const chain = await timeLoop(request, mockSends);

say(`stub alone: ${REQUESTS.toLocaleString('en')} direct db.send(new GetCommand(…)) under the same mock…`);
const key = keys.conversation(orgId, conversationId);
const stub = await timeLoop(async () => {
  await db.send(new GetCommand({ TableName: tableName, Key: key }));
  return true;
}, mockSends);
ddb.restore();

// Cross-check without sinon: the same answers from a plain async function on the shared client.
let plainSendCount = 0;
const plainSend = async (command: unknown) => {
  plainSendCount += 1;
  if (command instanceof GetCommand) return { Item: conversationItem };
  if (command instanceof BatchGetCommand)
    return { Responses: { [tableName]: [credentialItem, organizationItem] } };
  if (command instanceof UpdateCommand) return { Attributes: { used: 1 } };
  throw new Error(`unexpected command ${String(command)}`);
};
Object.defineProperty(db, 'send', { value: plainSend, configurable: true, writable: true });
say(`plain async stub (no sinon): ${REQUESTS.toLocaleString('en')} timed requests…`);
const plain = await timeLoop(request, () => {
  const count = plainSendCount;
  plainSendCount = 0;
  return count;
});

const result: WarmChainResult = {
  warmup: WARMUP,
  requests: REQUESTS,
  sendsPerRequest: chain.sends / REQUESTS,
  chain: distribution(chain.samplesUs),
  stub: distribution(stub.samplesUs),
  plain: distribution(plain.samplesUs),
  plainSendsPerRequest: plain.sends / REQUESTS,
  failures: chain.failures + plain.failures,
  firstStatus: first.statusCode,
};
console.log(`${RESULT_MARKER}${JSON.stringify(result)}`);
