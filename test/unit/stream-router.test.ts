import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { lambdaContext } from '../../infra/local/lambda-event';

/**
 * The table stream's one general reader hands each part the records of its entities, runs them at
 * once and reports what any of them failed: what each part saw as a worker of its own.
 */
const received = vi.hoisted(() => ({
  parts: new Map<string, string[]>(),
  fail: new Map<string, string[]>(),
}));

function part(name: string) {
  return {
    handler: async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
      if (received.fail.get(name)?.includes('*')) throw new Error(`${name} could not load`);
      received.parts.set(
        name,
        event.Records.map((record) => record.dynamodb?.SequenceNumber ?? ''),
      );
      return {
        batchItemFailures: (received.fail.get(name) ?? []).map((itemIdentifier) => ({ itemIdentifier })),
      };
    },
  };
}

vi.mock('../../functions/workers/realtime-push', () => part('realtime-push'));
vi.mock('../../functions/workers/webhook-fanout', () => part('webhook-fanout'));
vi.mock('../../functions/workers/conversation-changes', () => part('conversation-changes'));
vi.mock('../../functions/workers/counters', () => part('counters'));

function record(sequence: string, entity: string, ageSeconds = 1): DynamoDBRecord {
  return {
    eventID: sequence,
    eventName: 'INSERT',
    dynamodb: {
      SequenceNumber: sequence,
      ApproximateCreationDateTime: Date.now() / 1000 - ageSeconds,
      NewImage: { entity: { S: entity } },
    },
  };
}

const batch = [
  record('1', 'event'),
  record('2', 'conversation'),
  record('3', 'realtime'),
  record('4', 'message'),
  // A notice 20 minutes old: noise to whoever it was for.
  record('5', 'realtime', 1_200),
  record('6', 'visitor'),
  record('7', 'event'),
  record('8', 'organization'),
];

beforeEach(() => {
  received.parts.clear();
  received.fail.clear();
});

describe('stream-router', () => {
  it('hands each part the records of its entities, in stream order, and realtime no stale notice', async () => {
    const { handler } = await import('../../functions/workers/stream-router');

    const result = await handler({ Records: batch }, lambdaContext('stream-router'));

    expect(result.batchItemFailures).toEqual([]);
    expect(Object.fromEntries(received.parts)).toEqual({
      'webhook-fanout': ['1', '7'],
      'realtime-push': ['3'],
      'conversation-changes': ['2', '6'],
      counters: ['1', '2', '4', '7'],
    });
  });

  it('reports what any part failed, once each, and every record of a part that failed as a whole', async () => {
    const { handler } = await import('../../functions/workers/stream-router');
    received.fail.set('webhook-fanout', ['7']);
    received.fail.set('counters', ['4']);
    received.fail.set('realtime-push', ['*']);

    const result = await handler({ Records: batch }, lambdaContext('stream-router'));

    expect(result.batchItemFailures.map((failure) => failure.itemIdentifier).sort()).toEqual(['3', '4', '7']);
  });

  it('invokes no part for a batch without its records', async () => {
    const { handler } = await import('../../functions/workers/stream-router');

    await handler({ Records: [record('9', 'event')] }, lambdaContext('stream-router'));

    expect([...received.parts.keys()].sort()).toEqual(['counters', 'webhook-fanout']);
  });
});
