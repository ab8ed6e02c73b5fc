import type { Message } from '../schemas/message';
import { thousands } from '../thousands';

/** Messages in a transcript (CSV, PDF, e-mail): the first 5,000, oldest first. */
export const TRANSCRIPT_MAX_MESSAGES = 5_000;

/** Operator names by id, for "Ann (operator)" instead of an id. */
export type Names = ReadonlyMap<string, string>;

/** Who wrote a message, as a transcript shows it. */
export function senderLabel(message: Pick<Message, 'senderType' | 'senderId'>, names: Names): string {
  if (message.senderType === 'operator') {
    const name = names.get(message.senderId);
    return name ? `${name} (operator)` : 'operator';
  }
  return message.senderType;
}

/** One message as a transcript line: `[2026-11-21T10:00:00.000Z] Ann (operator): text`. */
export function transcriptLine(
  message: Pick<Message, 'senderType' | 'senderId' | 'createdAt' | 'content'>,
  names: Names,
  content = message.content,
): string {
  return `[${message.createdAt}] ${senderLabel(message, names)}: ${content}`;
}

/** The message shows in a transcript: deleted messages (no content left) do not. */
export const shown = (message: Pick<Message, 'deletedAt'>): boolean => !message.deletedAt;

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text made safe inside HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] ?? char);
}

export const truncationNotice = (shownCount: number) =>
  `This transcript shows the first ${thousands(shownCount)} messages of the conversation; later messages are not included.`;

/** A safe attachment file name: letters, digits, dot, dash, underscore only. */
export function attachmentName(stem: string, extension: 'csv' | 'json' | 'pdf'): string {
  const safe =
    stem
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^[.-]+/, '')
      .slice(0, 120) || 'export';
  return `${safe}.${extension}`;
}

export const contentDisposition = (fileName: string) => `attachment; filename="${fileName}"`;
