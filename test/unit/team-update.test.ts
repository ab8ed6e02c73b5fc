import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { teams } from '../../shared/db/teams';

const ddb = mockClient(DynamoDBDocumentClient);
afterAll(() => ddb.restore());

const stored = {
  id: 't',
  orgId: 'o',
  name: 'Returns',
  description: 'Parcels back',
  priority: 10,
  createdAt: '2026-11-24T10:00:00.000Z',
  updatedAt: '2026-11-24T10:00:00.000Z',
};

/** The Update a PATCH of `changes` sends. */
async function updateOf(changes: Parameters<typeof teams.update>[2]) {
  ddb.on(UpdateCommand).resolves({ Attributes: stored });
  await teams.update('o', 't', changes);
  const [call] = ddb.commandCalls(UpdateCommand);
  return call?.args[0].input;
}

describe('a team PATCH', () => {
  beforeEach(() => ddb.reset());

  it('writes the fields sent and updatedAt, on one of them differing (one flat OR: no redundant parentheses)', async () => {
    const input = await updateOf({ name: 'Parcels', description: 'Back to us' });
    expect(input?.UpdateExpression).toBe('SET #s0 = :s0, #s1 = :s1, #s2 = :s2');
    expect(input?.ExpressionAttributeNames).toEqual({
      '#s0': 'name',
      '#s1': 'description',
      '#s2': 'updatedAt',
    });
    expect(input?.ConditionExpression).toBe(
      'attribute_exists(pk) AND (attribute_not_exists(#s0) OR #s0 <> :s0 OR attribute_not_exists(#s1) OR #s1 <> :s1)',
    );
  });

  it('removes a null description, on it being there', async () => {
    const input = await updateOf({ description: null });
    expect(input?.UpdateExpression).toBe('SET #s0 = :s0 REMOVE #r0');
    expect(input?.ExpressionAttributeNames).toEqual({ '#s0': 'updatedAt', '#r0': 'description' });
    expect(input?.ConditionExpression).toBe('attribute_exists(pk) AND (attribute_exists(#r0))');
  });

  it('writes nothing for an empty body: it reads the team', async () => {
    ddb.on(GetCommand).resolves({ Item: stored });
    expect(await teams.update('o', 't', {})).toMatchObject({ name: 'Returns', memberIds: [] });
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });
});
