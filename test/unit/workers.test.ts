import type { DynamoDBRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { purgeJobOf } from '../../functions/workers/conversation-deletions';

const record = (
  eventName: DynamoDBRecord['eventName'],
  oldDeletedAt: string | undefined,
  newDeletedAt: string | undefined,
): DynamoDBRecord => ({
  eventName,
  dynamodb: {
    NewImage: {
      entity: { S: 'conversation' },
      organizationId: { S: 'org-1' },
      id: { S: 'conv-1' },
      ...(newDeletedAt ? { deletedAt: { S: newDeletedAt } } : { deletedAt: { NULL: true } }),
    },
    OldImage: oldDeletedAt ? { deletedAt: { S: oldDeletedAt } } : { deletedAt: { NULL: true } },
  },
});

describe('purgeJobOf', () => {
  it('asks for a purge only when a conversation has just been soft-deleted', () => {
    expect(purgeJobOf(record('MODIFY', undefined, '2026-11-22T00:00:00.000Z'))).toEqual({
      orgId: 'org-1',
      conversationId: 'conv-1',
    });
    expect(
      purgeJobOf(record('MODIFY', '2026-11-21T00:00:00.000Z', '2026-11-22T00:00:00.000Z')),
    ).toBeUndefined();
    expect(purgeJobOf(record('MODIFY', undefined, undefined))).toBeUndefined();
    expect(purgeJobOf(record('INSERT', undefined, '2026-11-22T00:00:00.000Z'))).toBeUndefined();
    const message = record('MODIFY', undefined, '2026-11-22T00:00:00.000Z');
    if (message.dynamodb?.NewImage) message.dynamodb.NewImage.entity = { S: 'message' };
    expect(purgeJobOf(message)).toBeUndefined();
  });
});
