import { clock } from '../../shared/clock';
import { exportJobOf, exportJobs } from '../../shared/db/exports';
import { NotFoundError } from '../../shared/errors';
import { ok, route } from '../../shared/http/route';
import { ids } from '../../shared/schemas/examples';
import { exportJob, jobParams } from '../../shared/schemas/export';
import { storage } from '../../shared/storage';

/** A download link lives this long; asking for the job again gives a fresh one (until the file expires). */
const DOWNLOAD_URL_SECONDS = 15 * 60;

export const getExportJob = route({
  method: 'GET',
  path: '/api/export/jobs/{jobId}',
  operationId: 'getExportJob',
  summary: 'Get an export job',
  description: `A PDF transcript job: \`queued\`, \`running\`, then \`completed\` with \`downloadUrl\` (fetch it without a credential; it expires at \`expiresAt\`, ${DOWNLOAD_URL_SECONDS / 60} minutes after this answer: ask again for a fresh one) or \`failed\` with \`error\`. Jobs and their files are kept 7 days. A job of another organization is 404.`,
  tag: 'Exports',
  scope: 'conversations:read',
  callers: ['apiKey', 'operator'],
  params: jobParams,
  response: { status: 200, schema: exportJob, description: 'The job' },
  errors: [404],
  examples: {
    response: {
      jobId: ids.event,
      status: 'completed',
      downloadUrl: `https://exports.s3.amazonaws.com/transcripts/${ids.organization}/${ids.event}.pdf?X-Amz-Expires=900&X-Amz-Signature=…`,
      expiresAt: '2026-11-21T10:15:00.000Z',
    },
  },
  handle: async ({ caller, params }) => {
    const job = await exportJobs.get(caller.orgId, params.jobId);
    if (!job) throw new NotFoundError('Export job not found');
    const answer = exportJobOf(job);
    // The projection named both, so each is set in its place; `expiresAt` is the URL's, not the TTL.
    if (job.status === 'completed' && job.objectKey) {
      answer.downloadUrl = await storage.downloadUrl('exports', job.objectKey, DOWNLOAD_URL_SECONDS);
      answer.expiresAt = new Date(clock.nowMs() + DOWNLOAD_URL_SECONDS * 1000).toISOString();
    }
    return ok(answer);
  },
});
