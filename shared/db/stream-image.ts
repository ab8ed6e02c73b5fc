import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';

/**
 * An item image of a stream record as plain values. Attributes that do not convert (an empty
 * attribute value, as DynamoDB Local's stream shows some binary ones) are left out rather than
 * failing the record: the stream's consumers read none of them.
 */
export function imageOf(image: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!image) return undefined;
  const attributes = image as Record<string, AttributeValue>;
  try {
    return unmarshall(attributes);
  } catch {
    const item: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(attributes)) {
      try {
        Object.assign(item, unmarshall({ [name]: value }));
      } catch {
        // Left out: see above.
      }
    }
    return item;
  }
}
