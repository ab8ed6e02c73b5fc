import { queueWorker } from '../../shared/batch';
import { purgeStep } from '../../shared/db/purge';
import { logger } from '../../shared/logger';
import { queues } from '../../shared/queues';

/** Time kept in hand to hand the rest over before Lambda's timeout. */
const SAFETY_MS = 15_000;

/**
 * Purges a soft-deleted conversation step by step (`purgeStep`): its messages are marked deleted,
 * their revisions and its notes deleted, snooze reasons and the conversation's own texts cleared. A
 * conversation with thousands of messages outlasts one invocation: before time runs out the worker
 * sends the rest of the job (with its cursor) back to the queue, and only then lets this message go.
 * If it dies instead, SQS delivers the message again and the idempotent steps resume where they can.
 */
export const handler = queueWorker('conversation-purge', async (job, _record, context) => {
  let after = job.after;
  let changed = 0;
  for (;;) {
    const step = await purgeStep(job.orgId, job.conversationId, after);
    changed += step.changed;
    after = step.next;
    if (!after) break;
    if (context.getRemainingTimeInMillis() < SAFETY_MS) {
      await queues.send('conversation-purge', { ...job, after });
      break;
    }
  }
  logger.info('purge step', { conversationId: job.conversationId, changed, done: !after });
});
