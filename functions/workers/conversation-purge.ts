import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { clock } from '../../shared/clock';
import { purgeStep } from '../../shared/db/purge';
import { beginRequest, logger } from '../../shared/logger';
import { observeQueueBatch } from '../../shared/metrics';
import { queues } from '../../shared/queues';
import * as z from '../../shared/schemas/zod';

const job = z.strictObject({ orgId: z.uuid(), conversationId: z.uuid(), after: z.optional(z.string()) });

/** Time kept in hand to hand the rest over before Lambda's timeout. */
const SAFETY_MS = 15_000;

/**
 * Purges a soft-deleted conversation step by step (`purgeStep`): its messages are marked deleted,
 * their revisions and its notes deleted, snooze reasons and the conversation's own texts cleared. A
 * conversation with thousands of messages outlasts one invocation: before time runs out the worker
 * sends the rest of the job (with its cursor) back to the queue, and only then lets this message go.
 * If it dies instead, SQS delivers the message again and the idempotent steps resume where they can.
 */
export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  beginRequest(context.awsRequestId);
  observeQueueBatch(event.Records, clock.nowMs());
  const failures: { itemIdentifier: string }[] = [];
  for (const record of event.Records) {
    try {
      const parsed = job.parse(JSON.parse(record.body));
      let after = parsed.after;
      let changed = 0;
      for (;;) {
        const step = await purgeStep(parsed.orgId, parsed.conversationId, after);
        changed += step.changed;
        after = step.next;
        if (!after) break;
        if (context.getRemainingTimeInMillis() < SAFETY_MS) {
          await queues.send('conversation-purge', { ...parsed, after });
          break;
        }
      }
      logger.info('purge step', { conversationId: parsed.conversationId, changed, done: !after });
    } catch (error) {
      logger.error('purge step failed', { error: error as Error, messageId: record.messageId });
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
};
