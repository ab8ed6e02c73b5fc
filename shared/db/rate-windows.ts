import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName, ttlSeconds } from './client';
import { isConditionFailure } from './errors';
import { keys } from './keys';

/**
 * Atomically reserves up to `wanted` requests of a credential's window, never letting the shared
 * count pass `limit`. Returns how many were granted (0 when the window is spent) and the count the
 * window has reached.
 */
export async function leaseFromWindow(input: {
  orgId: string | undefined;
  credentialId: string;
  windowStartMs: number;
  windowMs: number;
  limit: number;
  wanted: number;
}): Promise<{ granted: number; used: number }> {
  let wanted = input.wanted;
  // Two tries: the full chunk, then whatever the window still has.
  for (let attempt = 0; attempt < 2 && wanted > 0; attempt++) {
    try {
      const { Attributes } = await db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.rateWindow(input.orgId, input.credentialId, input.windowStartMs),
          UpdateExpression: 'SET used = if_not_exists(used, :zero) + :wanted, expiresAt = :expiresAt',
          ConditionExpression: 'attribute_not_exists(used) OR used <= :ceiling',
          ExpressionAttributeValues: {
            ':zero': 0,
            ':wanted': wanted,
            ':ceiling': input.limit - wanted,
            ':expiresAt': ttlSeconds(input.windowStartMs + 2 * input.windowMs),
          },
          ReturnValues: 'UPDATED_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { granted: wanted, used: Number(Attributes?.used ?? wanted) };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const item = (error as { Item?: Record<string, { N?: string }> }).Item;
      const used = Number(item?.used?.N ?? input.limit);
      wanted = Math.min(wanted, input.limit - used);
      if (wanted <= 0) return { granted: 0, used };
    }
  }
  return { granted: 0, used: input.limit };
}

/** `leaseFromWindow` on the organization's transcript e-mail window (one per organization, not per credential). */
export function leaseTranscriptEmails(
  input: Omit<Parameters<typeof leaseFromWindow>[0], 'credentialId'> & { orgId: string },
): Promise<{ granted: number; used: number }> {
  return leaseFromWindow({ ...input, credentialId: keys.transcriptEmailLimit });
}

/**
 * `leaseFromWindow` on the organization's request window (`rateLimitPerMinute`: every credential of
 * the organization together). One item per organization and minute, leased in chunks like a
 * credential's window (shared/http/rate-limiter.ts), so it takes a few writes a second at most.
 */
export function leaseOrganizationRequests(
  input: Omit<Parameters<typeof leaseFromWindow>[0], 'credentialId'> & { orgId: string },
): Promise<{ granted: number; used: number }> {
  return leaseFromWindow({ ...input, credentialId: keys.organizationRequestLimit });
}
