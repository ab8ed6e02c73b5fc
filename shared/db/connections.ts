import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import { db, tableName, ttlSeconds } from './client';
import { keys } from './keys';
import { childrenQuery, queryPrefix } from './query';

/** API Gateway closes a WebSocket after 2 hours at most: a connection record never outlives that. */
const CONNECTION_TTL_MS = 2 * 3_600_000 + 5 * 60_000;

export interface RealtimeConnection {
  connectionId: string;
  orgId: string;
  kind: 'operator' | 'visitor';
  /** The operator or visitor behind the connection. */
  principalId: string;
  connectedAt: string;
}

export const connections = {
  async add(connection: RealtimeConnection): Promise<void> {
    const partition = keys.realtimeConnections(connection.orgId, {
      visitorId: connection.kind === 'visitor' ? connection.principalId : undefined,
    });
    await db.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...keys.realtimeConnection(partition, connection.connectionId),
          entity: 'connection',
          ...connection,
          expiresAt: ttlSeconds(clock.nowMs() + CONNECTION_TTL_MS),
        },
      }),
    );
  },

  /** Open connections of an audience; expired records (TTL deletion is lazy) are left out. */
  async of(
    orgId: string,
    audience: { visitorId?: string | undefined },
  ): Promise<(RealtimeConnection & { pk: string; sk: string })[]> {
    const items = await queryPrefix(keys.realtimeConnections(orgId, audience), keys.realtimeConnectionPrefix);
    const now = ttlSeconds(clock.nowMs());
    return items
      .filter((item) => Number(item.expiresAt) > now)
      .map((item) => item as unknown as RealtimeConnection & { pk: string; sk: string });
  },

  /**
   * Whether an operator of the organization holds an open connection: a Query of the operators'
   * partition for one unexpired record, keys only. Usually one page; expired records not yet
   * removed by TTL are read past (a page is at most 1 MB of keys, so a second is rare).
   */
  async operatorConnected(orgId: string): Promise<boolean> {
    const now = ttlSeconds(clock.nowMs());
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await db.send(
        new QueryCommand({
          ...childrenQuery(keys.realtimeConnections(orgId, {}), keys.realtimeConnectionPrefix, {
            ':now': now,
          }),
          FilterExpression: 'expiresAt > :now',
          ProjectionExpression: 'pk',
          ExclusiveStartKey: startKey,
        }),
      );
      if ((page.Items ?? []).length > 0) return true;
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return false;
  },

  /** A connection the gateway reports gone. */
  async remove(connection: { pk: string; sk: string }): Promise<void> {
    await db.send(new DeleteCommand({ TableName: tableName, Key: { pk: connection.pk, sk: connection.sk } }));
  },
};

/** A realtime notice as written beside its change (shared/db/events.ts `realtimeItem`). */
export interface RealtimeNotice {
  id: string;
  type: string;
  audience: 'operators' | 'conversation';
  organizationId: string;
  conversationId: string;
  visitorId?: string;
  timestamp: string;
  payload: unknown;
}

/** The realtime notice a stream record names by its key; undefined for any other item, or one gone. */
export async function realtimeNoticeAt(key: { pk: string; sk: string }): Promise<RealtimeNotice | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: key }));
  return Item?.entity === 'realtime' ? (Item as unknown as RealtimeNotice) : undefined;
}
