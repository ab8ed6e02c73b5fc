/**
 * CSV cells that are safe to open in a spreadsheet: a text cell starting with what a spreadsheet
 * reads as a formula (`=`, `+`, `-`, `@`, tab, carriage return, line feed) gets a leading `'`, and
 * a cell holding a separator, a quote or a line break is quoted (RFC 4180). Numbers are written as
 * numbers.
 */
const FORMULA_START = /^[=+\-@\t\r\n]/;
const NEEDS_QUOTES = /[",\r\n]/;

export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One record, CRLF-terminated (RFC 4180). */
export const csvLine = (cells: readonly (string | number | null)[]): string =>
  `${cells.map(csvCell).join(',')}\r\n`;
