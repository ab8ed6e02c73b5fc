import { queueWorker } from '../../shared/batch';
import { visitorErasure } from '../../shared/db/visitor-erasure';
import { visitorMerge } from '../../shared/db/visitor-merge';
import { logger } from '../../shared/logger';
import { queues } from '../../shared/queues';

/** Time kept in hand to hand the rest over before Lambda's timeout. */
const SAFETY_MS = 15_000;
/**
 * The merge's last pass, this long after the first: a conversation created for the source while
 * the merge committed, or one the index showed late, is moved then.
 */
export const MERGE_SWEEP_DELAY_SECONDS = 10;

/**
 * Finishes what a merge or an erasure started (the request committed the visitor's new state; the
 * stream handed it here, see the stream-router's part conversation-changes). A merge moves the source's conversations to
 * its target in pages (`visitorMerge.moveConversations`), then looks again once a little later; an
 * erasure goes step by step (`visitorErasure.eraseStep`). Before time runs out the rest goes back
 * to the queue (with the cursor), and only then is this message let go; if the worker dies
 * instead, SQS delivers the message again and the idempotent steps resume.
 */
export const handler = queueWorker('visitor-jobs', async (job, _record, context) => {
  if (job.kind === 'merge') {
    const deadline = performance.now() + Math.max(0, context.getRemainingTimeInMillis() - SAFETY_MS);
    const progress = await visitorMerge.moveConversations(job.orgId, job.visitorId, deadline);
    if (!progress.done) await queues.send('visitor-jobs', job);
    else if (progress.merged && job.after !== 'sweep')
      await queues.send('visitor-jobs', { ...job, after: 'sweep' }, MERGE_SWEEP_DELAY_SECONDS);
    logger.info('visitor merge step', {
      visitorId: job.visitorId,
      moved: progress.moved,
      done: progress.done,
    });
    return;
  }
  let after = job.after;
  let changed = 0;
  for (;;) {
    const step = await visitorErasure.eraseStep(job.orgId, job.visitorId, after);
    changed += step.changed;
    after = step.next;
    if (!after) break;
    if (context.getRemainingTimeInMillis() < SAFETY_MS) {
      await queues.send('visitor-jobs', { ...job, after });
      break;
    }
  }
  logger.info('visitor erasure step', { visitorId: job.visitorId, changed, done: !after });
});
