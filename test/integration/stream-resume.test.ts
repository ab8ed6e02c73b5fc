import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { LocalStack } from '../../infra/local/stack';
import { call, createTenant, createVisitor, useBaseUrl } from '../helpers/api';
import { eventually } from '../helpers/eventually';

/**
 * `npm start` with DATA_DIR, crashed and started again: every event committed before the crash and
 * not yet handed to the stream workers is delivered afterwards. This file runs a stack of its own
 * (its own DynamoDB Local on a temporary DATA_DIR, its own queue and mail emulators, its own
 * gateway), twice, in its own process; the shared stack of the other files is not touched.
 */

/** The receiver's port, free when it starts (outside the shared receivers'): only this file's stack admits it. */
let receiverPort = 0;
const SUBSCRIBED = ['conversation.created', 'message.created', 'conversation.updated'];

interface Delivery {
  id: string;
  type: string;
}

type FeedPage = { data: Delivery[]; nextCursor: string | null; done: boolean };

let dataDir: string;
let stack: LocalStack | undefined;
let server: Server;
const received: Delivery[] = [];

/** A stack on `dataDir` with emulators of its own: the shared stack's endpoints are in the environment. */
async function startOwnStack(): Promise<LocalStack> {
  for (const name of ['DYNAMODB', 'SQS', 'S3', 'SESV2']) delete process.env[`AWS_ENDPOINT_URL_${name}`];
  // Functions read their configuration and make their clients once, at load: a new stack, new loads.
  vi.resetModules();
  const { startLocalStack } = await import('../../infra/local/stack');
  const started = await startLocalStack({
    port: 0,
    dataDir,
    seedDemo: false,
    platformAdminToken: inject('platformAdminToken'),
    env: { POWERTOOLS_LOG_LEVEL: 'ERROR', WEBHOOK_ALLOWED_TARGETS: `127.0.0.1:${receiverPort}` },
  });
  useBaseUrl(started.baseUrl);
  return started;
}

const receivedIds = () => new Set(received.map((delivery) => delivery.id));

/** The organization's subscribed events, from the feed (its pages followed until it says done). */
async function eventsOf(token: string): Promise<Delivery[]> {
  const events: Delivery[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 20; page++) {
    const after: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const { body } = await call<FeedPage>(
      'GET',
      `/api/events?limit=100&types=${SUBSCRIBED.join(',')}${after}`,
      {
        token,
      },
    );
    events.push(...body.data);
    if (body.done) break;
    cursor = body.nextCursor;
  }
  return events;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'stream-resume-'));
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Delivery);
      response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the receiver has no TCP address');
  receiverPort = address.port;
});

afterAll(async () => {
  await stack?.stop();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dataDir, { recursive: true, force: true });
});

describe('a local restart on the same DATA_DIR', () => {
  it('delivers, after a crash, every event committed before it and not yet handed to the workers', async () => {
    stack = await startOwnStack();
    const tenant = await createTenant();
    const webhook = await call('POST', '/api/webhooks', {
      token: tenant.apiKey,
      body: { url: `http://127.0.0.1:${receiverPort}/hooks`, events: SUBSCRIBED },
    });
    expect(webhook.status).toBe(201);
    const visitor = await createVisitor(tenant.widgetKey);
    await call('POST', '/api/conversations', { token: visitor.token, body: { message: 'Before' } });
    // Delivered as usual: conversation.created and message.created.
    await eventually(
      () => received.length,
      (count) => count >= 2,
    );
    const deliveredBefore = receivedIds();

    stack.pauseWorkers();
    // A read already under way when paused may still hand over what it finds: let it end first.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const conversation = await call<{ id: string }>('POST', '/api/conversations', {
      token: visitor.token,
      body: { message: 'During' },
    });
    expect(conversation.status).toBe(201);
    const patched = await call('PATCH', `/api/conversations/${conversation.body.id}`, {
      token: tenant.apiKey,
      body: { priority: 'high' },
    });
    expect(patched.status).toBe(200);
    const replied = await call('POST', `/api/conversations/${conversation.body.id}/messages`, {
      token: visitor.token,
      body: { content: 'Still there?' },
    });
    expect(replied.status).toBe(201);
    // The feed shows an event about a second after its commit.
    const committed = await eventually(
      async () =>
        (await eventsOf(tenant.apiKey)).map((event) => event.id).filter((id) => !deliveredBefore.has(id)),
      (ids) => ids.length >= 4,
      { timeoutMs: 6_000, intervalMs: 250 },
    );
    // conversation.created, message.created, conversation.updated, message.created
    expect(committed).toHaveLength(4);
    expect(committed.filter((id) => receivedIds().has(id))).toEqual([]);

    // kill -9: nothing flushed, nothing saved, DynamoDB Local SIGKILLed, the queues gone.
    await stack.crash();
    stack = undefined;
    const position = join(dataDir, 'stream-position.json');
    expect(existsSync(position)).toBe(true);
    const saved = JSON.parse(readFileSync(position, 'utf8')) as { shards: Record<string, string | null> };
    expect(Object.values(saved.shards).some((sequenceNumber) => sequenceNumber !== null)).toBe(true);

    stack = await startOwnStack();
    const after = await eventually(receivedIds, (ids) => committed.every((id) => ids.has(id)), {
      timeoutMs: 10_000,
    });
    expect(committed.filter((id) => !after.has(id))).toEqual([]);
    // Resumed after the saved position, not from the stream's start: what was delivered stays delivered.
    expect(received.filter((delivery) => deliveredBefore.has(delivery.id))).toHaveLength(
      deliveredBefore.size,
    );
  }, 60_000);
});
