/**
 * CSV as RFC 4180 writes it (CRLF between records; a field holding a comma, quote, CR or LF is
 * quoted, quotes doubled), safe to open in a spreadsheet: a text cell that a spreadsheet would read
 * as a formula (leading `=`, `+`, `-`, `@`, tab, CR or LF: OWASP's list plus the line feed that
 * csv-stringify's `escape_formulas` misses) gets a leading `'`, which spreadsheets show as text.
 *
 * Written here rather than with csv-stringify: an export's message column is one cell that may hold
 * thousands of messages, written as they are read (`StreamedCell`), which a record-at-a-time
 * library would have to hold whole. test/unit/csv.test.ts checks the output with csv-parse.
 */
export const CSV_EOL = '\r\n';

const FORMULA_START = /^[=+\-@\t\r\n]/;
const NEEDS_QUOTES = /[",\r\n]/;

export type CsvValue = string | number | boolean | null | undefined;

/** A text cell that would start a formula, made inert. */
export function neutralizeFormula(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/**
 * One cell: text neutralized and quoted as needed; numbers and booleans as written; null, undefined
 * and numbers that are not finite (no figure to show) empty.
 */
export function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' && !Number.isFinite(value)) return '';
  const text = typeof value === 'string' ? neutralizeFormula(value) : String(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One record, with its line end. */
export function csvRow(values: readonly CsvValue[]): string {
  let row = '';
  for (let i = 0; i < values.length; i++) row += (i === 0 ? '' : ',') + csvCell(values[i]);
  return row + CSV_EOL;
}

/**
 * A quoted cell written in pieces: `open()`, any number of `piece(text)` (the cell's text in order),
 * then `close()`. The first piece is neutralized like any cell.
 */
export class StreamedCell {
  private started = false;

  open(): string {
    this.started = false;
    return '"';
  }

  piece(text: string): string {
    if (text === '') return '';
    const safe = this.started ? text : neutralizeFormula(text);
    this.started = true;
    return safe.replaceAll('"', '""');
  }

  close(): string {
    return '"';
  }
}
