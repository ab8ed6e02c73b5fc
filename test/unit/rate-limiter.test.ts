import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { clock } from '../../shared/clock';
import { RateLimiter } from '../../shared/http/rate-limiter';
import { sharedWindows } from './helpers/rate-windows';

const ddb = mockClient(DynamoDBDocumentClient);
/** Start of a minute, so a test never straddles a window boundary by accident. */
const MINUTE_START = Date.parse('2026-11-21T10:00:00.000Z');

async function takeMany(limiter: RateLimiter, count: number, credentialId = 'cred-1') {
  const decisions = [];
  for (let i = 0; i < count; i++) decisions.push(await limiter.take('org-1', credentialId));
  return decisions;
}

describe('RateLimiter', () => {
  beforeEach(() => {
    ddb.reset();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(MINUTE_START + 15_000);
  });

  afterEach(() => {
    clock.reset();
    vi.useRealTimers();
  });

  it('leases quota in chunks: one UpdateCommand per chunk of requests', async () => {
    // Prepare
    sharedWindows(ddb);
    const limiter = new RateLimiter(100, 10);

    // Act
    const decisions = await takeMany(limiter, 25);

    // Assess
    expect(decisions.every((d) => d.allowed)).toBe(true);
    const updates = ddb.commandCalls(UpdateCommand);
    expect(updates).toHaveLength(3);
    expect(updates.map((call) => call.args[0].input.ExpressionAttributeValues?.[':wanted'])).toEqual([
      10, 10, 10,
    ]);
    expect(updates[0]?.args[0].input.Key).toEqual({
      pk: 'ORG#org-1#RATE#cred-1',
      sk: `WINDOW#${MINUTE_START}`,
    });
  });

  it('reports the limit, what remains of it and the seconds until the window resets', async () => {
    // Prepare
    sharedWindows(ddb);
    const limiter = new RateLimiter(100, 10);

    // Act
    const [first, second] = await takeMany(limiter, 2);

    // Assess
    expect(first).toEqual({ allowed: true, limit: 100, remaining: 99, resetSeconds: 45 });
    expect(second?.remaining).toBe(98);
  });

  it('admits exactly the limit across instances sharing a window, then denies', async () => {
    // Prepare: two warm instances of the same function, one shared counter.
    sharedWindows(ddb);
    const a = new RateLimiter(20, 6);
    const b = new RateLimiter(20, 6);

    // Act
    const decisions = [];
    for (let i = 0; i < 30; i++) decisions.push(await (i % 2 === 0 ? a : b).take('org-1', 'cred-1'));

    // Assess
    expect(decisions.filter((d) => d.allowed)).toHaveLength(20);
    const denied = decisions.filter((d) => !d.allowed);
    expect(denied).toHaveLength(10);
    for (const decision of denied) expect(decision).toMatchObject({ remaining: 0, limit: 20 });
    expect(decisions.slice(-4).every((d) => !d.allowed)).toBe(true);
  });

  it('grants the remainder of the window when it is smaller than a chunk', async () => {
    // Prepare
    const used = sharedWindows(ddb);
    used.set(`ORG#org-1#RATE#cred-1|WINDOW#${MINUTE_START}`, 7);
    const limiter = new RateLimiter(10, 5);

    // Act
    const decisions = await takeMany(limiter, 5);

    // Assess
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
  });

  it('stops asking DynamoDB once the window is spent', async () => {
    // Prepare
    sharedWindows(ddb);
    const limiter = new RateLimiter(4, 2);
    await takeMany(limiter, 6);
    const callsWhenSpent = ddb.commandCalls(UpdateCommand).length;

    // Act
    await takeMany(limiter, 10);

    // Assess
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(callsWhenSpent);
  });

  it('resets in the next window', async () => {
    // Prepare
    sharedWindows(ddb);
    const limiter = new RateLimiter(3, 3);
    const spent = await takeMany(limiter, 4);

    // Act
    clock.advance(60_000);
    const next = await takeMany(limiter, 3);

    // Assess
    expect(spent.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(next.every((d) => d.allowed)).toBe(true);
    expect(ddb.commandCalls(UpdateCommand).at(-1)?.args[0].input.Key?.sk).toBe(
      `WINDOW#${MINUTE_START + 60_000}`,
    );
  });

  it('keeps separate windows per credential', async () => {
    // Prepare
    sharedWindows(ddb);
    const limiter = new RateLimiter(2, 2);
    await takeMany(limiter, 3, 'cred-1');

    // Act
    const other = await takeMany(limiter, 2, 'cred-2');

    // Assess
    expect(other.every((d) => d.allowed)).toBe(true);
  });

  it('keys platform credentials under PLATFORM', async () => {
    // Prepare
    sharedWindows(ddb);
    const limiter = new RateLimiter(10, 5);

    // Act
    await limiter.take(undefined, 'platform-admin');

    // Assess
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input.Key?.pk).toBe('PLATFORM#RATE#platform-admin');
  });

  it('lets a DynamoDB failure other than the condition surface', async () => {
    // Prepare
    ddb.on(UpdateCommand).rejects(Object.assign(new Error('throttled'), { name: 'ThrottlingException' }));
    const limiter = new RateLimiter(10, 5);

    // Act / Assess
    await expect(limiter.take('org-1', 'cred-1')).rejects.toMatchObject({ name: 'ThrottlingException' });
  });
});
