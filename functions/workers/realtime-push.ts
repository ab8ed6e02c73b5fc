import { streamWorker } from '../../shared/batch';
import { connections, type RealtimeNotice, realtimeNoticeAt } from '../../shared/db/connections';
import { postToConnection } from '../../shared/realtime-api';

async function push(notice: RealtimeNotice): Promise<void> {
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
      // A connection the gateway reports gone is forgotten.
      if (!(await postToConnection(connection.connectionId, data))) await connections.remove(connection);
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
  const notice = await realtimeNoticeAt({ pk: keys.pk.S, sk: keys.sk.S });
  if (notice) await push(notice);
});
