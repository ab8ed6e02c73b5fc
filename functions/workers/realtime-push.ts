import {
  ApiGatewayManagementApiClient,
  GoneException,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { streamWorker } from '../../shared/batch';
import { db, tableName } from '../../shared/db/client';
import { connections } from '../../shared/db/connections';
import { traced } from '../../shared/tracing';

let client: ApiGatewayManagementApiClient | undefined;

/** The WebSocket API's management endpoint (the stage URL in AWS, the local server locally). */
function managementApi(): ApiGatewayManagementApiClient {
  const endpoint = process.env.REALTIME_ENDPOINT;
  if (!endpoint) throw new Error('REALTIME_ENDPOINT is not configured');
  client ??= traced(new ApiGatewayManagementApiClient({ endpoint }));
  return client;
}

interface Notice {
  id: string;
  type: string;
  audience: 'operators' | 'conversation';
  organizationId: string;
  conversationId: string;
  visitorId?: string;
  timestamp: string;
  payload: unknown;
}

async function push(notice: Notice): Promise<void> {
  const audiences = [
    connections.of(notice.organizationId, {}),
    // Visitors hear only about their own conversation, and never operator-only notices.
    ...(notice.audience === 'conversation' && notice.visitorId
      ? [connections.of(notice.organizationId, { visitorId: notice.visitorId })]
      : []),
  ];
  const recipients = (await Promise.all(audiences)).flat();
  const data = Buffer.from(
    JSON.stringify({
      id: notice.id,
      type: notice.type,
      conversationId: notice.conversationId,
      timestamp: notice.timestamp,
      payload: notice.payload,
    }),
  );
  await Promise.all(
    recipients.map(async (connection) => {
      try {
        await managementApi().send(
          new PostToConnectionCommand({ ConnectionId: connection.connectionId, Data: data }),
        );
      } catch (error) {
        if (error instanceof GoneException || (error as { name?: string }).name === 'GoneException') {
          await connections.remove({ pk: connection.pk, sk: connection.sk });
          return;
        }
        throw error;
      }
    }),
  );
}

/**
 * Stream consumer: each realtime notice written beside its change (message_edited,
 * note_invalidated, conversation_snoozed) reaches the open connections of its audience. Notices are
 * read by key, as the webhook fan-out reads events; a failed push reports its record for retry.
 */
export const handler = streamWorker('realtime push', async (record) => {
  const keys = record.dynamodb?.Keys;
  if (record.eventName !== 'INSERT' || !keys?.pk?.S || !keys.sk?.S) return;
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: { pk: keys.pk.S, sk: keys.sk.S } }),
  );
  if (Item?.entity === 'realtime') await push(Item as unknown as Notice);
});
