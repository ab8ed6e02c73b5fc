import { isoInstant, plainText, uuid } from './common';
import { conversation, conversationStatus, senderType } from './conversation';
import { built, documented, lazily, named } from './names';
import { attachmentMetadata } from './upload';
import * as z from './zod';

/** `true` / `false` as a query string carries them. */
const booleanParam = (fallback: boolean) =>
  z._default(
    z.pipe(
      z.enum(['true', 'false']),
      z.transform((value) => value === 'true'),
    ),
    fallback,
  );

export const exportFormat = z.enum(['csv', 'json']);

/** `GET /api/export/conversations` (export:read): every conversation with its messages. */
export const exportConversationsQuery = lazily(() =>
  z.strictObject({
    format: z._default(exportFormat, 'json'),
    redact_pii: booleanParam(false),
    date_from: z.optional(isoInstant),
    date_to: z.optional(isoInstant),
  }),
);

/**
 * Comma-separated tags, each as conversations store them (a tag holding a comma cannot be named
 * here); a conversation matches when it has every one.
 */
const tagList = documented(
  z.pipe(
    z.string().check(z.minLength(1), z.maxLength(1050), plainText()),
    z.transform((value) =>
      value
        .split(',')
        .map((tag) => tag.trim())
        .filter(Boolean),
    ),
  ),
  { pattern: '^[^,]{1,50}(,[^,]{1,50}){0,19}$' },
);

/** `POST /api/export/conversations/bulk` (export:write): filtered, CSV by default. */
export const bulkExportQuery = lazily(() =>
  z.strictObject({
    format: z._default(exportFormat, 'csv'),
    redact_pii: booleanParam(false),
    status: z.optional(conversationStatus),
    operatorId: z.optional(uuid),
    tags: z.optional(
      tagList.check(
        z.refine((tags) => tags.length >= 1 && tags.length <= 20 && tags.every((tag) => tag.length <= 50), {
          message: 'Give 1 to 20 comma-separated tags of at most 50 characters',
        }),
      ),
    ),
    dateFrom: z.optional(isoInstant),
    dateTo: z.optional(isoInstant),
  }),
);

/** A message as exports write it: no search index text (it repeats the content, unredacted). */
export const exportedMessage = named('ExportedMessage', () =>
  z.object({
    id: uuid,
    senderType,
    senderId: uuid,
    /** The operator's name for operator messages, else null. */
    senderName: z.nullable(z.string()),
    type: z.enum(['text', 'system', 'file']),
    content: z.string(),
    /** Metadata of its files (no URL: `GET /api/uploads/{id}` gives a fresh one). */
    attachments: z.array(attachmentMetadata),
    isRead: z.boolean(),
    isEdited: z.boolean(),
    editedAt: z.nullable(isoInstant),
    createdAt: isoInstant,
    deletedAt: z.nullable(isoInstant),
    replyToId: z.nullable(uuid),
  }),
);
export type ExportedMessage = z.infer<typeof exportedMessage>;

export const exportedConversation = named('ExportedConversation', () =>
  z.object({
    ...built(conversation).shape,
    /** The assigned operator's name, null when unassigned. */
    operatorName: z.nullable(z.string()),
    /** Every message, oldest first. */
    messages: z.array(exportedMessage),
  }),
);
export type ExportedConversation = z.infer<typeof exportedConversation>;

/** A JSON export is one array, streamed; a CSV export is text (`text/csv`). */
export const conversationExport = lazily(() => z.union([z.array(exportedConversation), z.string()]));

/** The CSV of one conversation's transcript. */
export const csvFile = z.string();

export const transcriptQuery = lazily(() =>
  z.strictObject({ format: z._default(z.enum(['csv', 'pdf']), 'csv') }),
);

export const exportJobStatus = z.enum(['queued', 'running', 'completed', 'failed']);

export const exportJobAccepted = named('ExportJobAccepted', () =>
  z.object({ jobId: uuid, status: exportJobStatus, statusUrl: z.string() }),
);

export const exportJob = named('ExportJob', () =>
  z.object({
    jobId: uuid,
    status: exportJobStatus,
    /** Once completed: fetch it without a credential until `expiresAt`, then ask for the job again. */
    downloadUrl: z.optional(z.string()),
    expiresAt: z.optional(isoInstant),
    /** Why a failed job failed. */
    error: z.optional(z.string()),
  }),
);
export type ExportJob = z.infer<typeof exportJob>;

export const jobParams = lazily(() => z.strictObject({ jobId: uuid }));

export const emailTranscriptBody = named('EmailTranscriptRequest', () =>
  z.strictObject({ email: z.email().check(z.maxLength(254)) }),
);

export const emailTranscriptResult = named('EmailTranscriptResult', () =>
  z.object({
    success: z.boolean(),
    /** Messages in the e-mail (at most 5,000). */
    messageCount: z.int(),
    /** More messages exist than the e-mail holds; it ends with a notice saying so. */
    truncated: z.boolean(),
  }),
);
