import { createHmac, randomUUID } from 'node:crypto';
import type { SigningResult } from './protocol';

const WARMUP = 50_000;
const ROUNDS = 5;
const PER_ROUND = 60_000;

/**
 * A `conversation.created` delivery body as the fan-out serializes it (the event envelope and the
 * conversation with its first message), about 1 KB.
 */
export function realisticBody(): string {
  const now = new Date().toISOString();
  const conversationId = randomUUID();
  const content = 'Hello, my order #48213 has not arrived yet and the tracking page shows no update.';
  return JSON.stringify({
    id: randomUUID(),
    type: 'conversation.created',
    timestamp: now,
    organizationId: randomUUID(),
    data: {
      id: conversationId,
      status: 'open',
      priority: 'normal',
      operatorId: null,
      teamId: null,
      source: 'api',
      aiEnabled: false,
      snoozedUntil: null,
      lastMessageAt: now,
      title: content.slice(0, 80),
      messageCount: 1,
      unreadCount: 1,
      hasUnreadMessages: true,
      tags: ['shipping'],
      customFields: { orderId: '48213' },
      language: null,
      metadata: { channel: 'web' },
      version: 1,
      createdAt: now,
      updatedAt: now,
      visitor: { id: randomUUID(), identifier: 'grace@example.com', name: 'Grace Hopper' },
      lastMessage: { id: randomUUID(), senderType: 'visitor', content, createdAt: now },
      firstResponseTimeMs: null,
      locale: null,
    },
  });
}

/** Mean µs per call of `fn` over `calls` calls (the loop's own cost included: a few ns). */
function timeLoop(calls: number, fn: (i: number) => string): { us: number; sink: number } {
  let sink = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) sink += fn(i).length;
  const elapsed = Number(process.hrtime.bigint() - t0);
  return { us: elapsed / calls / 1000, sink };
}

/**
 * (a) µs per delivery for the signature: `signatureHeader` with one secret over a ~1 KB body,
 * after a warm-up, in rounds (the timestamp changes every call, as it does per attempt).
 */
export async function measureSigning(log: (line: string) => void): Promise<SigningResult> {
  const { generateSecret, signatureHeader, webhookHeaders } = await import('../shared/webhooks/signing');
  const secret = generateSecret();
  const secrets = [secret];
  const body = realisticBody();
  const id = randomUUID();
  const base = Math.floor(Date.now() / 1000);
  const sign = (i: number) => signatureHeader({ id, timestamp: base + (i & 1023), body }, secrets);

  log(
    `signing: ${WARMUP.toLocaleString('en')} warm-up + ${ROUNDS} × ${PER_ROUND.toLocaleString('en')} signatureHeader calls over a ${Buffer.byteLength(body)} B body…`,
  );
  let sink = timeLoop(WARMUP, sign).sink;
  const roundMeansUs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const timed = timeLoop(PER_ROUND, sign);
    roundMeansUs.push(timed.us);
    sink += timed.sink;
  }
  const calls = ROUNDS * PER_ROUND;
  const meanUs = roundMeansUs.reduce((sum, value) => sum + value, 0) / ROUNDS;

  // Cross-checks: the HMAC alone (what any implementation pays), and the header object the worker builds.
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const hmac = (i: number) =>
    createHmac('sha256', key)
      .update(`${id}.${base + (i & 1023)}.${body}`)
      .digest('base64');
  sink += timeLoop(WARMUP, hmac).sink;
  const hmacOnly = timeLoop(PER_ROUND * 2, hmac);
  const headers = (i: number) =>
    webhookHeaders({ id, timestamp: base + (i & 1023), body }, secrets)['webhook-signature'];
  sink += timeLoop(WARMUP, headers).sink;
  const withHeaders = timeLoop(PER_ROUND * 2, headers);
  if (sink + hmacOnly.sink + withHeaders.sink === 0) log('(unreachable: keeps the results alive)');

  return {
    bodyBytes: Buffer.byteLength(body),
    warmup: WARMUP,
    calls,
    meanUs,
    roundMeansUs,
    hmacOnlyUs: hmacOnly.us,
    headersUs: withHeaders.us,
  };
}
