import { Readable } from 'node:stream';
import { clock } from '../../shared/clock';
import { config, configDefaults } from '../../shared/config';
import { actorOf } from '../../shared/conversations/actor';
import type { StoredConversation } from '../../shared/db/conversations';
import { exportJobs, operatorNames } from '../../shared/db/exports';
import { auditActorOf, orgAudit } from '../../shared/db/org-audit';
import { leaseTranscriptEmails } from '../../shared/db/rate-windows';
import { RateLimitedError } from '../../shared/errors';
import { CSV_EOL, csvCell, csvRow, StreamedCell } from '../../shared/exports/csv';
import {
  attachmentName,
  contentDisposition,
  escapeHtml,
  type Names,
  senderLabel,
  TRANSCRIPT_MAX_MESSAGES,
  transcriptLine,
  truncationNotice,
} from '../../shared/exports/transcript';
import { transcriptSource } from '../../shared/exports/transcript-source';
import { reply, route } from '../../shared/http/route';
import { mail } from '../../shared/mail';
import { queues } from '../../shared/queues';
import { idParams } from '../../shared/schemas/common';
import { ids } from '../../shared/schemas/examples';
import {
  csvFile,
  emailTranscriptBody,
  emailTranscriptResult,
  exportJobAccepted,
  transcriptQuery,
} from '../../shared/schemas/export';
import { thousands } from '../../shared/thousands';
import { loadConversation } from '../conversations/access';

export const TRANSCRIPT_COLUMNS = [
  'conversationId',
  'title',
  'createdAt',
  'transcript',
  'messageCount',
  'truncated',
];

const FLUSH_CHARS = 64 * 1024;

/** The transcript CSV, streamed: one row, its `transcript` cell written message by message. */
function transcriptCsv(orgId: string, conversation: StoredConversation, names: Names): Readable {
  const source = transcriptSource(orgId, conversation.id);
  async function* produce(): AsyncGenerator<string> {
    const cell = new StreamedCell();
    let out = csvRow(TRANSCRIPT_COLUMNS);
    out += `${[conversation.id, conversation.title, conversation.createdAt].map(csvCell).join(',')},${cell.open()}`;
    let first = true;
    for await (const page of source.pages()) {
      for (const message of page) {
        out += cell.piece((first ? '' : '\n') + transcriptLine(message, names));
        first = false;
      }
      if (out.length >= FLUSH_CHARS) {
        yield out;
        out = '';
      }
    }
    out += `${cell.close()},${source.state.count},${source.state.truncated}${CSV_EOL}`;
    yield out;
  }
  return Readable.from(produce(), { objectMode: false });
}

export const getTranscript = route({
  method: 'GET',
  path: '/api/conversations/{id}/transcript',
  operationId: 'getTranscript',
  summary: 'Export a conversation transcript',
  description: [
    "`format=csv` (default): the file at once, streamed: one row with `conversationId`, `title`, `createdAt`, `transcript` (the first 5,000 messages oldest first, one line each: `[createdAt] sender: text`; deleted messages and internal notes are not part of it), `messageCount` and `truncated` (more messages exist). Cells a spreadsheet would read as formulas start with `'`.",
    '`format=pdf`: 202 with a job; poll `statusUrl` (`GET /api/export/jobs/{jobId}`, relative to the API base URL) until `completed`, then download from its `downloadUrl`.',
    'Outside the history window: 403 `outside_history_window`.',
  ].join('\n\n'),
  tag: 'Exports',
  scope: 'conversations:read',
  callers: ['apiKey', 'operator'],
  params: idParams,
  query: transcriptQuery,
  response: {
    status: 200,
    schema: csvFile,
    description: 'The transcript as CSV (`format=csv`)',
    contentType: 'text/csv',
    headers: ['Content-Disposition'],
  },
  alternative: {
    status: 202,
    schema: exportJobAccepted,
    description: 'A PDF job was queued (`format=pdf`)',
    example: { jobId: ids.event, status: 'queued', statusUrl: `/api/export/jobs/${ids.event}` },
  },
  errors: [404],
  examples: {
    response:
      'conversationId,title,createdAt,transcript,messageCount,truncated\r\n019a7c1f-0a11-7b22-9c33-0d44e55f6603,"Hello, my order is late",2026-11-21T10:00:00.000Z,"[2026-11-21T10:00:00.000Z] visitor: Hello, my order is late",1,false\r\n',
  },
  handle: async ({ caller, organization, params, query }) => {
    const csv = query.format !== 'pdf';
    // The CSV's operator names beside the conversation: one trip before the messages' pages.
    const [conversation, names] = await Promise.all([
      loadConversation(caller, organization, params.id),
      csv ? operatorNames(caller.orgId) : undefined,
    ]);
    if (!csv) {
      const job = await exportJobs.create({
        orgId: caller.orgId,
        conversationId: conversation.id,
        requestedBy: actorOf(caller),
      });
      try {
        await queues.send('pdf-jobs', {
          orgId: caller.orgId,
          jobId: job.id,
          conversationId: conversation.id,
        });
      } catch (error) {
        await exportJobs.finish(caller.orgId, job.id, { status: 'failed', error: 'not_queued' });
        throw error;
      }
      return reply(202, { jobId: job.id, status: job.status, statusUrl: `/api/export/jobs/${job.id}` });
    }
    return {
      status: 200,
      body: transcriptCsv(caller.orgId, conversation, names ?? new Map()),
      headers: {
        'Content-Type': 'text/csv; charset=utf-8',
        'Content-Disposition': contentDisposition(attachmentName(`transcript-${conversation.id}`, 'csv')),
      },
    };
  },
});

const HOUR_MS = 3_600_000;
/**
 * SES takes messages up to 10 MB (40 MB on request): the text and HTML parts stop growing here,
 * which ends the transcript early with the same notice as the 5,000-message cap.
 */
const MAX_TEXT_CHARS = 3_000_000;

/** One hour window of the organization's transcript e-mails; over the limit is 429 until it ends. */
async function takeEmailAllowance(orgId: string): Promise<void> {
  const now = clock.nowMs();
  const windowStartMs = now - (now % HOUR_MS);
  const { granted } = await leaseTranscriptEmails({
    orgId,
    windowStartMs,
    windowMs: HOUR_MS,
    limit: config.transcriptEmailsPerHour,
    wanted: 1,
  });
  if (granted === 0) {
    const retryAfter = Math.max(1, Math.ceil((windowStartMs + HOUR_MS - now) / 1000));
    throw new RateLimitedError(retryAfter, {
      message: `This organization has sent its ${config.transcriptEmailsPerHour} transcript e-mails for this hour`,
      details: { reason: 'transcript_email_limit' },
      quota: { limit: config.transcriptEmailsPerHour, remaining: 0, resetSeconds: retryAfter },
    });
  }
}

/** The e-mail's text and HTML parts (every stored text escaped in the HTML). */
async function composeTranscript(orgId: string, conversation: StoredConversation) {
  const names = await operatorNames(orgId);
  const source = transcriptSource(orgId, conversation.id);
  const title = conversation.title.replace(/\s+/g, ' ').trim() || 'Conversation';
  const text: string[] = [`Transcript: ${title}`, `Started ${conversation.createdAt}`, ''];
  const html: string[] = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<h1 style="font-size:18px">Transcript: ${escapeHtml(title)}</h1>`,
    `<p style="color:#555">Started ${escapeHtml(conversation.createdAt)}</p>`,
  ];
  let size = 0;
  let shownCount = 0;
  let cut = false;
  read: for await (const page of source.pages()) {
    for (const message of page) {
      const line = transcriptLine(message, names);
      if (size + line.length > MAX_TEXT_CHARS) {
        cut = true;
        break read;
      }
      size += line.length;
      shownCount++;
      text.push(line);
      html.push(
        `<p><strong>${escapeHtml(senderLabel(message, names))}</strong> <span style="color:#777">${escapeHtml(message.createdAt)}</span><br>${escapeHtml(message.content).replace(/\r?\n/g, '<br>')}</p>`,
      );
    }
  }
  const truncated = cut || source.state.truncated;
  if (truncated) {
    text.push('', truncationNotice(shownCount));
    html.push(`<p><em>${escapeHtml(truncationNotice(shownCount))}</em></p>`);
  }
  html.push('</body></html>');
  return {
    subject: `Transcript: ${title}`,
    text: text.join('\n'),
    html: html.join('\n'),
    shownCount,
    truncated,
  };
}

export const emailTranscript = route({
  method: 'POST',
  path: '/api/conversations/{id}/transcript',
  operationId: 'emailTranscript',
  summary: 'Send a conversation transcript by e-mail',
  description: `Sends the transcript to \`email\` (a text and an HTML part): messages oldest first, internal notes and deleted messages left out, at most ${thousands(TRANSCRIPT_MAX_MESSAGES)} messages, then a notice that the transcript is truncated (\`truncated: true\`). The conversation must be inside the history window (else 403 \`outside_history_window\`). Visitors cannot use it. Each organization may send \`TRANSCRIPT_EMAILS_PER_HOUR\` transcript e-mails an hour (default ${configDefaults.transcriptEmailsPerHour}); beyond that 429 \`details.reason = "transcript_email_limit"\` with \`Retry-After\` (the end of the hour).`,
  tag: 'Exports',
  scope: 'conversations:read',
  callers: ['apiKey', 'operator'],
  params: idParams,
  body: emailTranscriptBody,
  response: { status: 202, schema: emailTranscriptResult, description: 'The e-mail was handed to SES' },
  errors: [404],
  examples: {
    request: { email: 'ada@example.com' },
    response: { success: true, messageCount: 42, truncated: false },
  },
  handle: async ({ caller, organization, params, body, requestId }) => {
    const conversation = await loadConversation(caller, organization, params.id);
    await takeEmailAllowance(caller.orgId);
    const composed = await composeTranscript(caller.orgId, conversation);
    await mail.send({
      from: config.transcriptEmailFrom,
      to: body.email,
      subject: composed.subject,
      text: composed.text,
      html: composed.html,
    });
    await orgAudit.record(caller.orgId, {
      ...auditActorOf(caller),
      type: 'transcript.emailed',
      target: { type: 'conversation', id: conversation.id },
      details: {
        requestId,
        to: body.email,
        messageCount: composed.shownCount,
        truncated: composed.truncated,
      },
    });
    return reply(202, { success: true, messageCount: composed.shownCount, truncated: composed.truncated });
  },
});
