import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { mockClient } from 'aws-sdk-client-mock';

/**
 * The shared DynamoDB rate windows behind a mocked client, one counter per window key, applying the
 * same condition DynamoDB would: a lease goes through only while `used <= :ceiling`, and a refusal
 * carries the old item. Returns the counters (`pk|sk` → used).
 */
export function sharedWindows(ddb: ReturnType<typeof mockClient>): Map<string, number> {
  const used = new Map<string, number>();
  ddb.on(UpdateCommand).callsFake((input: UpdateCommandInput) => {
    const key = `${String(input.Key?.pk)}|${String(input.Key?.sk)}`;
    const values = input.ExpressionAttributeValues ?? {};
    const wanted = Number(values[':wanted']);
    const ceiling = Number(values[':ceiling']);
    const current = used.get(key);
    if (current !== undefined && current > ceiling) {
      throw new ConditionalCheckFailedException({
        message: 'The conditional request failed',
        $metadata: {},
        Item: { used: { N: String(current) } },
      });
    }
    const next = (current ?? 0) + wanted;
    used.set(key, next);
    return { Attributes: { used: next } };
  });
  return used;
}
