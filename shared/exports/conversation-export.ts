import { Readable } from 'node:stream';
import type { StoredConversation } from '../db/conversations';
import { toConversation } from '../db/conversations';
import { conversationsToExport, type ExportFilters, messagePages } from '../db/exports';
import type { StoredMessage } from '../db/messages';
import type { ExportedMessage } from '../schemas/export';
import { CSV_EOL, csvRow, StreamedCell } from './csv';
import { type Names, shown, transcriptLine } from './transcript';

export type ExportFormat = 'csv' | 'json';

export interface ExportSummary {
  rows: number;
  bytes: number;
  completed: boolean;
  error?: string;
}

export interface ConversationExportOptions {
  orgId: string;
  filters: ExportFilters;
  format: ExportFormat;
  names: Names;
  /** Masks PII in message text; identity when not asked for. */
  redact: ((text: string) => string) | undefined;
  /** Written rows never exceed this (the count before the first byte said so; a race may add some). */
  maxRows: number;
  /** Called once the stream ends, fails or is abandoned by the client (the audit entry). */
  onEnd: (summary: ExportSummary) => Promise<void>;
}

export const CSV_COLUMNS = [
  'id',
  'title',
  'status',
  'priority',
  'source',
  'visitorId',
  'visitorIdentifier',
  'operatorId',
  'operatorName',
  'tags',
  'language',
  'createdAt',
  'updatedAt',
  'lastMessageAt',
  'messageCount',
  'messages',
] as const;

/** Output is handed on in pieces of about this size: fewer, larger writes, still bounded. */
const FLUSH_BYTES = 64 * 1024;
/** Conversations whose first page of messages is read ahead of the one being written. */
const READ_AHEAD = 8;

function exportedMessage(message: StoredMessage, names: Names, redact: ConversationExportOptions['redact']) {
  const value: ExportedMessage = {
    id: message.id,
    senderType: message.senderType,
    senderId: message.senderId,
    senderName: message.senderType === 'operator' ? (names.get(message.senderId) ?? null) : null,
    type: message.type,
    content: redact ? redact(message.content) : message.content,
    attachments: message.attachments ?? [],
    isRead: message.isRead,
    isEdited: message.isEdited,
    editedAt: message.editedAt,
    createdAt: message.createdAt,
    deletedAt: message.deletedAt,
    replyToId: message.replyToId,
  };
  return value;
}

/** The conversation's own fields as JSON, without the closing brace (its messages follow). */
function conversationHead(
  conversation: StoredConversation,
  names: Names,
  redact: ConversationExportOptions['redact'],
): string {
  const shape = toConversation(conversation);
  const lastMessage =
    shape.lastMessage && redact
      ? { ...shape.lastMessage, content: redact(shape.lastMessage.content) }
      : shape.lastMessage;
  const operatorName = conversation.operatorId ? (names.get(conversation.operatorId) ?? null) : null;
  const json = JSON.stringify({ ...shape, lastMessage, operatorName });
  return `${json.slice(0, -1)},"messages":[`;
}

function csvHead(conversation: StoredConversation, names: Names): string {
  const row = csvRow([
    conversation.id,
    conversation.title,
    conversation.status,
    conversation.priority,
    conversation.source,
    conversation.visitorId,
    conversation.visitor?.identifier ?? null,
    conversation.operatorId,
    conversation.operatorId ? (names.get(conversation.operatorId) ?? null) : null,
    conversation.tags.join(';'),
    conversation.language,
    conversation.createdAt,
    conversation.updatedAt,
    conversation.lastMessageAt,
    conversation.messageCount,
    '',
  ]);
  // The last cell (messages) is written in pieces: drop the empty cell's line end.
  return row.slice(0, -CSV_EOL.length);
}

/** The first page of each conversation's messages, read a few conversations ahead. */
function readAhead(orgId: string, chunk: readonly StoredConversation[]) {
  const iterators = chunk.map((conversation) => messagePages(orgId, conversation.id));
  const firsts: Promise<IteratorResult<StoredMessage[]>>[] = [];
  const start = (i: number) => {
    const iterator = iterators[i];
    if (!iterator || firsts[i]) return;
    const first = iterator.next();
    // Awaited later, in order; marked handled now so a failure ahead is not an unhandled rejection.
    first.catch(() => undefined);
    firsts[i] = first;
  };
  for (let i = 0; i < READ_AHEAD; i++) start(i);
  return {
    async *pages(i: number): AsyncGenerator<StoredMessage[]> {
      start(i);
      for (let ahead = 1; ahead <= READ_AHEAD; ahead++) start(i + ahead);
      const iterator = iterators[i];
      const first = firsts[i];
      if (!iterator || !first) return;
      let result = await first;
      while (!result.done) {
        yield result.value;
        result = await iterator.next();
      }
    },
  };
}

/**
 * The export as a stream: conversations in chunks, each conversation's messages page by page,
 * written as read, in pieces of ~64 KB and only as fast as the client takes them (back-pressure).
 * A JSON export is one array; a failure after the first byte leaves it unclosed (and a CSV short
 * of its last row), ends the stream with the error, and `onEnd` records it.
 */
export function conversationExport(options: ConversationExportOptions): Readable {
  const { orgId, filters, format, names, redact } = options;
  const summary: ExportSummary = { rows: 0, bytes: 0, completed: false };
  let pending = '';
  const flush = () => {
    const out = pending;
    pending = '';
    summary.bytes += Buffer.byteLength(out);
    return out;
  };

  async function* produce(): AsyncGenerator<string> {
    try {
      pending += format === 'json' ? '[' : csvRow([...CSV_COLUMNS]);
      const cell = new StreamedCell();
      done: for await (const chunk of conversationsToExport(orgId, filters)) {
        const ahead = readAhead(orgId, chunk);
        for (let i = 0; i < chunk.length; i++) {
          const conversation = chunk[i];
          if (!conversation) continue;
          if (summary.rows >= options.maxRows) break done;
          if (format === 'json') {
            pending += (summary.rows > 0 ? ',' : '') + conversationHead(conversation, names, redact);
          } else {
            pending += `${csvHead(conversation, names)}${cell.open()}`;
          }
          let written = 0;
          for await (const page of ahead.pages(i)) {
            for (const message of page) {
              if (format === 'json') {
                pending += (written > 0 ? ',' : '') + JSON.stringify(exportedMessage(message, names, redact));
                written++;
              } else if (shown(message)) {
                const content = redact ? redact(message.content) : message.content;
                pending += cell.piece((written > 0 ? '\n' : '') + transcriptLine(message, names, content));
                written++;
              }
              // Within the page too: a page is up to 1 MB of messages, a piece stays ~64 KB.
              if (pending.length >= FLUSH_BYTES) yield flush();
            }
          }
          pending += format === 'json' ? ']}' : `${cell.close()}${CSV_EOL}`;
          summary.rows++;
          if (pending.length >= FLUSH_BYTES) yield flush();
        }
      }
      if (format === 'json') pending += ']';
      yield flush();
      summary.completed = true;
    } catch (error) {
      summary.error = error instanceof Error ? error.name : 'Error';
      throw error;
    } finally {
      // Runs on success, on a failure, and when the client goes away (the stream's return()).
      await options.onEnd({ ...summary });
    }
  }

  return Readable.from(produce(), { objectMode: false, highWaterMark: FLUSH_BYTES });
}
