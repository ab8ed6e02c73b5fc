import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import { db, tableName, ttlSeconds } from './client';
import { isConditionFailure } from './errors';
import { keys } from './keys';

const RETENTION_MS = 24 * 3_600_000;

export interface StoredResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

export type Claim =
  | { outcome: 'claimed' }
  | { outcome: 'replay'; response: StoredResponse }
  | { outcome: 'mismatch' }
  | { outcome: 'in_progress' };

/** Plain attribute map of a failed conditional write, as the low-level client returns it. */
type RawItem = Record<string, { S?: string; N?: string; M?: Record<string, unknown> }>;

export const idempotency = {
  /**
   * Claims the key for this request in one conditional write; when the key is taken, the old item
   * comes back with the failure, so a replay costs no extra read.
   */
  async claim(orgId: string, key: string, fingerprint: string): Promise<Claim> {
    const now = clock.nowMs();
    try {
      await db.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...keys.idempotency(orgId, key),
            entity: 'idempotency',
            fingerprint,
            status: 'pending',
            expiresAt: ttlSeconds(now + RETENTION_MS),
          },
          // Expired records may linger (TTL deletion is lazy): treat them as free.
          ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :now',
          ExpressionAttributeValues: { ':now': ttlSeconds(now) },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { outcome: 'claimed' };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const old = (error as { Item?: RawItem }).Item;
      if (old?.fingerprint?.S !== fingerprint) return { outcome: 'mismatch' };
      const stored = old.response?.S;
      if (old.status?.S === 'completed' && stored) return { outcome: 'replay', response: JSON.parse(stored) };
      return { outcome: 'in_progress' };
    }
  },

  async complete(orgId: string, key: string, fingerprint: string, response: StoredResponse): Promise<void> {
    await db.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...keys.idempotency(orgId, key),
          entity: 'idempotency',
          fingerprint,
          status: 'completed',
          // Stored as text: the replay must be byte-identical to the first answer.
          response: JSON.stringify(response),
          expiresAt: ttlSeconds(clock.nowMs() + RETENTION_MS),
        },
      }),
    );
  },

  /** Frees the key after a failure so that the client's retry runs again. */
  async release(orgId: string, key: string): Promise<void> {
    await db.send(new DeleteCommand({ TableName: tableName, Key: keys.idempotency(orgId, key) }));
  },
};
