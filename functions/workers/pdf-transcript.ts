import { queueWorker } from '../../shared/batch';
import { conversations } from '../../shared/db/conversations';
import { exportJobs, operatorNames } from '../../shared/db/exports';
import { attachmentName, contentDisposition } from '../../shared/exports/transcript';
import { newPdf, renderTranscriptPdf } from '../../shared/exports/transcript-pdf';
import { transcriptSource } from '../../shared/exports/transcript-source';
import { logger } from '../../shared/logger';
import { publishExportMetrics } from '../../shared/metrics';
import type { QueueJob } from '../../shared/queue-jobs';
import { queueDefinitions } from '../../shared/resources';
import { storage } from '../../shared/storage';

type Job = QueueJob<'pdf-jobs'>;

/** Receives before the dead-letter queue (shared/resources.ts). */
const PDF_MAX_RECEIVES = queueDefinitions.find((queue) => queue.name === 'pdf-jobs')?.maxReceiveCount ?? 1;

/** Where a job's file lives in the exports bucket (it expires with the bucket's lifecycle rule). */
export const pdfObjectKey = (orgId: string, jobId: string) => `transcripts/${orgId}/${jobId}.pdf`;

/** Renders the transcript into the upload as it is read; returns the file's size. */
async function render(input: Job): Promise<number | 'missing'> {
  const conversation = await conversations.get(input.orgId, input.conversationId);
  if (!conversation) return 'missing';
  const names = await operatorNames(input.orgId);
  const source = transcriptSource(input.orgId, conversation.id);
  const doc = newPdf();
  const upload = storage.putStream('exports', pdfObjectKey(input.orgId, input.jobId), doc, {
    contentType: 'application/pdf',
    contentDisposition: contentDisposition(attachmentName(`transcript-${conversation.id}`, 'pdf')),
  });
  // The upload reads while the document is written; a failure of either ends both.
  const written = renderTranscriptPdf(doc, {
    conversation,
    names,
    pages: source.pages(),
    state: source.state,
  });
  written.catch((error: unknown) => doc.destroy(error as Error));
  const [bytes] = await Promise.all([upload, written]);
  return bytes;
}

/**
 * PDF transcripts (`GET …/transcript?format=pdf`): marks the job running, streams the first 5,000
 * messages into a PDF uploaded to the exports bucket as it is produced, then marks the job completed
 * (or failed, which the status endpoint reports). A redelivered message of a finished job is
 * skipped; one whose attempt died mid-way renders again (same object key, overwritten).
 */
export const handler = queueWorker('pdf-jobs', async (job, record) => {
  if (!(await exportJobs.start(job.orgId, job.jobId))) return;
  try {
    const started = Date.now();
    const outcome = await render(job);
    if (outcome === 'missing') {
      await exportJobs.finish(job.orgId, job.jobId, { status: 'failed', error: 'conversation_not_found' });
      return;
    }
    await exportJobs.finish(job.orgId, job.jobId, {
      status: 'completed',
      objectKey: pdfObjectKey(job.orgId, job.jobId),
    });
    publishExportMetrics(undefined, outcome);
    logger.info('pdf transcript', { jobId: job.jobId, bytes: outcome, ms: Date.now() - started });
  } catch (error) {
    // The last receive before the dead-letter queue marks the job failed, so clients stop polling.
    const receives = Number(record.attributes?.ApproximateReceiveCount ?? '1');
    if (receives >= PDF_MAX_RECEIVES) {
      await exportJobs
        .finish(job.orgId, job.jobId, { status: 'failed', error: 'rendering_failed' })
        .catch(() => undefined);
    }
    throw error;
  }
});
