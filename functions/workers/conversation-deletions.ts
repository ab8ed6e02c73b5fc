import type { DynamoDBRecord } from 'aws-lambda';
import { streamWorker } from '../../shared/batch';
import type { QueueJob } from '../../shared/queue-jobs';
import { queues } from '../../shared/queues';

/** A purge job: the organization and soft-deleted conversation whose texts are to be purged. */
export type PurgeJob = QueueJob<'conversation-purge'>;

/** The purge job a stream record asks for: a conversation whose `deletedAt` was just set. */
export function purgeJobOf(record: DynamoDBRecord): PurgeJob | undefined {
  const next = record.dynamodb?.NewImage;
  const previous = record.dynamodb?.OldImage;
  if (record.eventName !== 'MODIFY' || next?.entity?.S !== 'conversation') return undefined;
  const deletedNow = next.deletedAt?.S !== undefined;
  const deletedBefore = previous?.deletedAt?.S !== undefined;
  if (!deletedNow || deletedBefore) return undefined;
  const orgId = next.organizationId?.S;
  const conversationId = next.id?.S;
  return orgId && conversationId ? { orgId, conversationId } : undefined;
}

/**
 * Stream consumer: each conversation that became soft-deleted gets a purge job. The deletion
 * committed before this runs, so no job is sent for a deletion that did not happen, and none is
 * lost: a failed send reports its record, and the stream delivers it again.
 */
export const handler = streamWorker('purge job', async (record) => {
  const job = purgeJobOf(record);
  if (job) await queues.send('conversation-purge', job);
});
