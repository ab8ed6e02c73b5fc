import type { MsDistribution } from './protocol';

export const PASS = '✓';
export const MISS = '✗';

export const mark = (ok: boolean): string => (ok ? PASS : MISS);

export function progress(line: string): void {
  console.log(`[bench] ${line}`);
}

export const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;
export const ms = (ns: number): string => `${(ns / 1e6).toFixed(1)} ms`;
export const us = (value: number): string => `${value.toFixed(2)} µs`;

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  const upper = sorted[middle] ?? Number.NaN;
  if (sorted.length % 2 === 1) return upper;
  return ((sorted[middle - 1] ?? upper) + upper) / 2;
}

/** Nearest-rank percentile of an already sorted array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/** Count, p50, p99 and max of latencies in milliseconds. */
export function distribution(values: readonly number[]): MsDistribution {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
  };
}

/** A plain-text table; columns whose header starts with '>' are right-aligned (the '>' is dropped). */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const right = headers.map((header) => header.startsWith('>'));
  const titles = headers.map((header) => (header.startsWith('>') ? header.slice(1) : header));
  const width = titles.map((title, column) =>
    Math.max([...title].length, ...rows.map((row) => [...(row[column] ?? '')].length)),
  );
  const pad = (text: string, column: number) => {
    const fill = ' '.repeat(Math.max(0, (width[column] ?? 0) - [...text].length));
    return right[column] ? fill + text : text + fill;
  };
  const line = (cells: readonly string[]) =>
    `  ${titles.map((_, column) => pad(cells[column] ?? '', column)).join(' │ ')}`;
  const rule = `  ${width.map((w) => '─'.repeat(w)).join('─┼─')}`;
  return [line(titles), rule, ...rows.map(line)].join('\n');
}

export function section(title: string): void {
  console.log('');
  console.log(title);
  console.log('═'.repeat([...title].length));
}

/** One line per target, collected across phases for the closing summary. */
export interface Verdict {
  what: string;
  ok: boolean;
  detail: string;
}
