import PDFDocument from 'pdfkit';
import type { StoredConversation } from '../db/conversations';
import type { StoredMessage } from '../db/messages';
import { type Names, senderLabel, truncationNotice } from './transcript';

/** What the document may hold unread by its consumer before writing waits (back-pressure). */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/**
 * pdfkit pushes its output regardless of the reader: wait while more than `MAX_BUFFERED_BYTES` sit
 * unread (the S3 upload is slower than rendering), so memory stays bounded for 5,000 long messages.
 */
async function backPressure(doc: PDFKit.PDFDocument): Promise<void> {
  while (doc.readableLength > MAX_BUFFERED_BYTES && !doc.destroyed) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Writes a transcript into a PDF document as its messages arrive, page by page, and ends it. The
 * standard Helvetica font covers Latin-1 text; characters outside it print as their closest glyph.
 */
export async function renderTranscriptPdf(
  doc: PDFKit.PDFDocument,
  input: {
    conversation: StoredConversation;
    names: Names;
    pages: AsyncIterable<StoredMessage[]>;
    /** Read once the pages are done: how many were shown and whether more exist. */
    state: { count: number; truncated: boolean };
  },
): Promise<void> {
  const { conversation, names } = input;
  doc.info.Title = `Transcript: ${conversation.title}`;
  doc
    .font('Helvetica-Bold')
    .fontSize(16)
    .text(`Transcript: ${conversation.title || 'Conversation'}`);
  doc.font('Helvetica').fontSize(9).fillColor('#555555');
  doc.text(`Conversation ${conversation.id}, started ${conversation.createdAt}`).moveDown();
  for await (const page of input.pages) {
    for (const message of page) {
      doc.font('Helvetica-Bold').fontSize(10).fillColor('#000000');
      doc.text(`${senderLabel(message, names)}  `, { continued: true });
      doc.font('Helvetica').fontSize(8).fillColor('#777777').text(message.createdAt);
      doc
        .fontSize(10)
        .fillColor('#000000')
        .text(message.content || ' ')
        .moveDown(0.5);
    }
    await backPressure(doc);
  }
  if (input.state.truncated) {
    doc.moveDown().font('Helvetica-Oblique').fontSize(9).text(truncationNotice(input.state.count));
  }
  doc.end();
}

export const newPdf = (): PDFKit.PDFDocument =>
  new PDFDocument({ size: 'A4', margin: 50, compress: true, info: { Producer: 'conversation-service' } });
