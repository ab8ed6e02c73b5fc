/**
 * The layer asks DynamoDB Local for `ReturnConsumedCapacity: INDEXES` (units of the table and of
 * each index) to charge partitions, and hands the client exactly what it asked for. Most answers
 * end with their `ConsumedCapacity`: it is cut out of the bytes (no parse of the items, no
 * re-serialization); other answers are parsed.
 */

export interface CapacityReport {
  TableName?: string;
  CapacityUnits?: number;
  Table?: { CapacityUnits?: number };
  GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
  LocalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
  [other: string]: unknown;
}

const KEY = Buffer.from('"ConsumedCapacity":');
const ASK_PREFIX = Buffer.from('{"ReturnConsumedCapacity":"INDEXES",');
const COMMA = 0x2c;
const OPEN = 0x7b;
const CLOSE = 0x7d;

/**
 * The request asking for INDEXES: `changed` (an input the layer rewrote) serialized, or the client's
 * bytes with the field put in front when it did not ask (the common case: no re-serialization).
 */
export function askIndexes(
  body: Buffer,
  input: Record<string, unknown>,
  changed?: Record<string, unknown>,
): Buffer {
  if (changed) return Buffer.from(JSON.stringify({ ...changed, ReturnConsumedCapacity: 'INDEXES' }));
  const asked = input.ReturnConsumedCapacity;
  if (asked === 'INDEXES') return body;
  if (asked === undefined && body[0] === OPEN) {
    let next = 1;
    while (
      next < body.length &&
      (body[next] === 0x20 || body[next] === 0x0a || body[next] === 0x0d || body[next] === 0x09)
    )
      next++;
    if (body[next] !== CLOSE) return Buffer.concat([ASK_PREFIX, body.subarray(1)]);
  }
  return Buffer.from(JSON.stringify({ ...input, ReturnConsumedCapacity: 'INDEXES' }));
}

/** What the client asked for, from the INDEXES report: the report, its totals (TOTAL), or nothing. */
export function reduceCapacity(consumed: unknown, asked: unknown): unknown {
  if (asked === 'INDEXES') return consumed;
  if (asked !== 'TOTAL') return undefined;
  const total = (report: CapacityReport): CapacityReport => {
    const { Table: _table, GlobalSecondaryIndexes: _global, LocalSecondaryIndexes: _local, ...rest } = report;
    return rest;
  };
  return Array.isArray(consumed) ? consumed.map(total) : total(consumed as CapacityReport);
}

/**
 * The answer's report and its body as the client asked, cutting the trailing `"ConsumedCapacity":…}`
 * out of the bytes; undefined when the answer does not end with it (then parse it: `settleParsed`).
 */
export function settleBytes(body: Buffer, asked: unknown): { consumed: unknown; body: Buffer } | undefined {
  const at = body.lastIndexOf(KEY);
  if (at < 1 || body[body.length - 1] !== CLOSE) return undefined;
  const before = body[at - 1];
  if (before !== COMMA && before !== OPEN) return undefined;
  let consumed: unknown;
  try {
    // Parses only if the report is the answer's last member (anything nested would leave closers).
    consumed = JSON.parse(body.subarray(at + KEY.length, body.length - 1).toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof consumed !== 'object' || consumed === null) return undefined;
  if (asked === 'INDEXES') return { consumed, body };
  const reduced = reduceCapacity(consumed, asked);
  const head = body.subarray(0, before === COMMA ? at - 1 : at);
  const tail =
    reduced === undefined
      ? '}'
      : `${before === COMMA ? ',' : ''}"ConsumedCapacity":${JSON.stringify(reduced)}}`;
  return { consumed, body: Buffer.concat([head, Buffer.from(tail)]) };
}

/** The same on a parsed answer: returns the INDEXES report and sets the one the client asked for. */
export function settleParsed(answer: Record<string, unknown>, asked: unknown): unknown {
  const consumed = answer.ConsumedCapacity;
  if (consumed === undefined || asked === 'INDEXES') return consumed;
  const reduced = reduceCapacity(consumed, asked);
  if (reduced === undefined) delete answer.ConsumedCapacity;
  else answer.ConsumedCapacity = reduced;
  return consumed;
}

export function reportsOf(consumed: unknown): CapacityReport[] {
  if (Array.isArray(consumed)) return consumed as CapacityReport[];
  return consumed && typeof consumed === 'object' ? [consumed as CapacityReport] : [];
}

/** The table's part of a report (INDEXES: `Table`; else the total). */
export function tableUnits(report: CapacityReport | undefined): number {
  return report?.Table?.CapacityUnits ?? (report?.GlobalSecondaryIndexes ? 0 : (report?.CapacityUnits ?? 0));
}

export function indexUnits(report: CapacityReport | undefined, index: string): number {
  return report?.GlobalSecondaryIndexes?.[index]?.CapacityUnits ?? 0;
}
