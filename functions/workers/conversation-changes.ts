import type { DynamoDBRecord } from 'aws-lambda';
import { visitorKeyOwner } from '../../shared/db/visitor-record';
import type { QueueJob } from '../../shared/queue-jobs';
import { queues } from '../../shared/queues';
import { streamBatchWorker } from '../../shared/stream-batch';

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

/** A visitor job: a visitor just merged (its conversations move) or just erased (its data goes). */
export type VisitorJob = QueueJob<'visitor-jobs'>;

/** The visitor job a stream record asks for: a visitor whose `mergedInto` or `erasedAt` was just set. */
export function visitorJobOf(record: DynamoDBRecord): VisitorJob | undefined {
  const next = record.dynamodb?.NewImage;
  const previous = record.dynamodb?.OldImage;
  if (record.eventName !== 'MODIFY' || next?.entity?.S !== 'visitor') return undefined;
  // The organization is in the key (the visitor item does not repeat it).
  const owner = visitorKeyOwner(next.pk?.S ?? '');
  if (!owner) return undefined;
  const { orgId, visitorId } = owner;
  const newly = (name: string) => next[name]?.S !== undefined && previous?.[name]?.S === undefined;
  if (newly('erasedAt')) return { orgId, visitorId, kind: 'erase' };
  if (newly('mergedInto')) return { orgId, visitorId, kind: 'merge' };
  return undefined;
}

/**
 * Stream consumer: each conversation that became soft-deleted gets a purge job and each visitor
 * that was just merged or erased a visitor job. The change committed before this runs, so no job is
 * sent for a change that did not happen, and none is lost: a record whose send failed is reported,
 * and the stream delivers it again.
 */
export const handler = streamBatchWorker('conversation changes', {
  prepare: async () => undefined,
  handle: async (record) => {
    const job = purgeJobOf(record);
    if (job) await queues.send('conversation-purge', job);
    const visitorJob = visitorJobOf(record);
    if (visitorJob) await queues.send('visitor-jobs', visitorJob);
  },
});
