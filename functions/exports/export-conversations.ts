import type { OrgCaller } from '../../shared/auth/caller';
import { clock } from '../../shared/clock';
import { config, configDefaults } from '../../shared/config';
import { countConversations, type ExportFilters, operatorNames } from '../../shared/db/exports';
import { auditActorOf, orgAudit } from '../../shared/db/org-audit';
import { ValidationError } from '../../shared/errors';
import { conversationExport, type ExportFormat } from '../../shared/exports/conversation-export';
import { piiRedactor } from '../../shared/exports/redact';
import { attachmentName, contentDisposition } from '../../shared/exports/transcript';
import type { StreamedReply } from '../../shared/http/route';
import { route } from '../../shared/http/route';
import { logger } from '../../shared/logger';
import { publishExportMetrics } from '../../shared/metrics';
import { conversationExample } from '../../shared/schemas/examples';
import {
  bulkExportQuery,
  conversationExport as conversationExportSchema,
  type ExportedConversation,
  exportConversationsQuery,
} from '../../shared/schemas/export';
import type { Organization } from '../../shared/schemas/organization';
import { thousands } from '../../shared/thousands';
import { historyCutoff } from '../conversations/access';

const exportedExample: ExportedConversation = {
  ...conversationExample,
  operatorName: 'Grace Hopper',
  messages: [
    {
      id: '019a7c1f-0a12-7c44-8d55-1e66f77a8804',
      senderType: 'visitor',
      senderId: conversationExample.visitorId,
      senderName: null,
      type: 'text',
      content: 'Hello, my order is late',
      attachments: [],
      isRead: true,
      isEdited: false,
      editedAt: null,
      createdAt: '2026-11-21T10:00:00.000Z',
      deletedAt: null,
      replyToId: null,
    },
  ],
};

const SHARED_DESCRIPTION = [
  'Streamed as it is read (a large export starts at once and never sits whole in memory); the answer is an attachment (`Content-Disposition`).',
  `The conversations it matches are counted first: more than the row limit (\`EXPORT_ROW_LIMIT\`, default ${thousands(configDefaults.exportRowLimit)}) is 422 \`details.reason = "row_limit_exceeded"\` before any byte. Newest \`lastMessageAt\` first; conversations outside the history window are left out.`,
  "JSON is one array of conversations, each with `operatorName` and every message oldest first. CSV has one row per conversation, its messages flattened into the `messages` cell (one line per message: `[createdAt] sender: text`); cells a spreadsheet would read as formulas start with `'`.",
  "`redact_pii=true` masks e-mail addresses and phone numbers (international forms, and national forms of the countries of the organization's locales) in message text as `[email redacted]` / `[phone redacted]`.",
  'Each export is audited when it ends (who, filters, rows, bytes, completed or not). Exports are not idempotent: after a timeout, check what arrived before asking again. A failure after the first byte breaks the connection (a JSON array is left unclosed), never ending as a file that looks complete.',
].join('\n\n');

const contentTypes = { csv: 'text/csv; charset=utf-8', json: 'application/json; charset=utf-8' } as const;

interface ExportRequest {
  caller: OrgCaller;
  organization: Organization;
  requestId: string;
  operation: 'exportConversations' | 'bulkExportConversations';
  format: ExportFormat;
  redact: boolean;
  filters: ExportFilters;
  /** The query parameters of the window (a 422 names one). */
  dateFields: { from: string; to: string };
}

const later = (a: string | undefined, b: string | undefined) => (a && b ? (a > b ? a : b) : (a ?? b));

/**
 * Checks, counts (422 over the limit) and starts an export; the audit entry is written when the
 * stream ends, however it ends.
 */
async function startExport(request: ExportRequest): Promise<StreamedReply> {
  const { caller, organization, filters } = request;
  if (filters.from && filters.to && filters.from > filters.to) {
    throw ValidationError.field(request.dateFields.to, 'The end of the window is before its start');
  }
  // The history window is the earliest `lastMessageAt` the organization may still read.
  const bounded: ExportFilters = { ...filters, from: later(filters.from, historyCutoff(organization)) };
  const limit = config.exportRowLimit;
  const [matched, names] = await Promise.all([
    countConversations(caller.orgId, bounded, limit),
    operatorNames(caller.orgId),
  ]);
  if (matched > limit) {
    throw ValidationError.field(
      request.dateFields.from,
      `This export matches more than ${limit} conversations; narrow it with a shorter window or filters`,
      { reason: 'row_limit_exceeded', limit },
    );
  }
  const redact = request.redact ? await piiRedactor(organization.locales) : undefined;
  const startedAt = clock.nowIso();
  const body = conversationExport({
    orgId: caller.orgId,
    filters: bounded,
    format: request.format,
    names,
    redact,
    maxRows: limit,
    onEnd: async (summary) => {
      publishExportMetrics(summary.rows, summary.bytes);
      try {
        await orgAudit.record(caller.orgId, {
          ...auditActorOf(caller),
          type: 'export.streamed',
          target: { type: 'export', id: request.requestId },
          details: {
            operation: request.operation,
            format: request.format,
            redactPii: request.redact,
            filters: { ...filters, tags: filters.tags ? [...filters.tags] : undefined },
            matched,
            startedAt,
            ...summary,
          },
        });
      } catch (error) {
        logger.error('export audit entry not written', {
          error: error as Error,
          requestId: request.requestId,
        });
      }
    },
  });
  const stamp = startedAt.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return {
    status: 200,
    body,
    headers: {
      'Content-Type': contentTypes[request.format],
      'Content-Disposition': contentDisposition(attachmentName(`conversations-${stamp}`, request.format)),
    },
  };
}

export const exportConversations = route({
  method: 'GET',
  path: '/api/export/conversations',
  operationId: 'exportConversations',
  summary: 'Export conversations with their messages',
  description: `Every conversation of the organization whose \`lastMessageAt\` lies within \`date_from\`..\`date_to\` (each optional, inclusive), JSON by default.\n\n${SHARED_DESCRIPTION}`,
  tag: 'Exports',
  scope: 'export:read',
  callers: ['apiKey', 'operator'],
  query: exportConversationsQuery,
  response: {
    status: 200,
    schema: conversationExportSchema,
    description: 'The export: a JSON array, or CSV with `format=csv`',
    contentType: ['application/json', 'text/csv'],
    headers: ['Content-Disposition'],
  },
  examples: { response: [exportedExample] },
  handle: async ({ caller, organization, query, requestId }) =>
    startExport({
      caller,
      organization,
      requestId,
      operation: 'exportConversations',
      format: query.format,
      redact: query.redact_pii,
      filters: { from: query.date_from, to: query.date_to },
      dateFields: { from: 'date_from', to: 'date_to' },
    }),
});

export const bulkExportConversations = route({
  method: 'POST',
  path: '/api/export/conversations/bulk',
  operationId: 'bulkExportConversations',
  summary: 'Export conversations, filtered',
  description: `The conversations that match every filter given (query parameters, no body): \`status\`, \`operatorId\` (the assigned operator), \`tags\` (comma-separated; the conversation has all of them), \`dateFrom\`..\`dateTo\` (inclusive bounds of \`lastMessageAt\`). CSV by default.\n\n${SHARED_DESCRIPTION}`,
  tag: 'Exports',
  scope: 'export:write',
  callers: ['apiKey', 'operator'],
  query: bulkExportQuery,
  response: {
    status: 200,
    schema: conversationExportSchema,
    description: 'The export: CSV, or a JSON array with `format=json`',
    contentType: ['text/csv', 'application/json'],
    headers: ['Content-Disposition'],
  },
  examples: { response: [exportedExample] },
  handle: async ({ caller, organization, query, requestId }) =>
    startExport({
      caller,
      organization,
      requestId,
      operation: 'bulkExportConversations',
      format: query.format,
      redact: query.redact_pii,
      filters: {
        status: query.status,
        operatorId: query.operatorId,
        tags: query.tags,
        from: query.dateFrom,
        to: query.dateTo,
      },
      dateFields: { from: 'dateFrom', to: 'dateTo' },
    }),
});
