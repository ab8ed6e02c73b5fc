/**
 * One conversation export in a process of its own, as the exports function runs it: bundled with
 * the CDK options and run by plain `node --expose-gc` (export-volume-main.ts builds and starts it),
 * so its resident memory is the function's and not tsx's or the seeder's. It invokes the streaming
 * handler as the local gateway does (proxy event, `LocalResponseStream`) into a sink that counts
 * the bytes and drops them (the fastest client there is), and reports the peak RSS while
 * exporting, the time, the messages read and DynamoDB's read units.
 *
 * Input (environment): the local stack's variables, `BENCH_EXPORT_FORMAT` (csv | json),
 * `BENCH_API_KEY`, `BENCH_HEAP` (lambda | capped: which node flags the parent chose). Output: `@@RESULT <ExportRun>`.
 */
import { handler } from '../functions/exports/handler';
import { lambdaContext, proxyEvent } from '../infra/local/lambda-event';
import { dynamo } from '../shared/db/client';
import { dynamoMeter } from '../shared/db/meter';
import { LocalResponseStream, type ResponseSink } from '../shared/http/streaming';
import { settledRss, watchPeakRss } from './peak-rss';
import { type ExportRun, RESULT_MARKER } from './protocol';

const format = process.env.BENCH_EXPORT_FORMAT === 'json' ? 'json' : 'csv';
const apiKey = process.env.BENCH_API_KEY ?? '';

/** Counts occurrences of `needle` across chunk boundaries. */
function counter(needle: string) {
  const pattern = Buffer.from(needle);
  let tail = Buffer.alloc(0);
  let count = 0;
  return {
    add(chunk: Buffer) {
      const text = tail.length ? Buffer.concat([tail, chunk]) : chunk;
      for (let at = text.indexOf(pattern); at !== -1; at = text.indexOf(pattern, at + pattern.length))
        count++;
      tail = Buffer.from(text.subarray(Math.max(0, text.length - pattern.length + 1)));
    },
    get count() {
      return count;
    },
  };
}

// Messages read: Items of the message Queries (the export shows every seeded message). The
// document client's input may be marshalled or not yet at this step.
let messagesRead = 0;
const isMessagePrefix = (value: unknown) =>
  value === 'MSG#' ||
  (typeof value === 'object' && value !== null && (value as { S?: unknown }).S === 'MSG#');
dynamo.middlewareStack.add(
  (next, context) => async (args) => {
    const result = await next(args);
    const input = args.input as { ExpressionAttributeValues?: Record<string, unknown> };
    if (
      context.commandName === 'QueryCommand' &&
      isMessagePrefix(input.ExpressionAttributeValues?.[':prefix'])
    )
      messagesRead += (result.output as { Count?: number }).Count ?? 0;
    return result;
  },
  { step: 'initialize', name: 'benchMessagesRead' },
);

const baselineRss = settledRss();
let status = 0;
let bytes = 0;
let chunks = 0;
let largestChunk = 0;
let first = '';
let last = '';
let failure: string | undefined;
// A conversation is one `"messages":[` in JSON; a CSV row ends with CRLF (message lines use LF).
const rows = counter(format === 'json' ? '"messages":[' : '\r\n');
const sink: ResponseSink = {
  writeHead: (statusCode) => {
    status = statusCode;
  },
  write: (chunk) => {
    if (chunks === 0) first = chunk.subarray(0, 1).toString();
    chunks++;
    bytes += chunk.length;
    largestChunk = Math.max(largestChunk, chunk.length);
    last = chunk.subarray(-1).toString();
    rows.add(chunk);
    return true;
  },
  once: () => undefined,
  end: (callback) => callback?.(),
  destroy: (error) => {
    failure = error instanceof Error ? error.message : 'destroyed';
  },
};
const event = proxyEvent({
  method: 'GET',
  resource: '/api/export/conversations',
  headers: { Authorization: `Bearer ${apiKey}` },
  query: { format },
});

dynamoMeter.reset();
const watch = watchPeakRss();
const started = process.hrtime.bigint();
await handler(event, new LocalResponseStream(sink), lambdaContext('exports', 900_000));
const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
const peak = watch.stop();
const usage = dynamoMeter.current;

const result: ExportRun = {
  format,
  heap: process.env.BENCH_HEAP === 'capped' ? 'capped' : 'lambda',
  flags: process.execArgv.filter((flag) => flag.startsWith('--max-')).join(' '),
  status,
  bytes,
  chunks,
  largestChunk,
  rows: format === 'json' ? rows.count : Math.max(0, rows.count - 1),
  complete: failure === undefined && (format === 'json' ? first === '[' && last === ']' : last === '\n'),
  failure,
  messages: messagesRead,
  elapsedMs,
  readUnits: usage.readUnits,
  commands: usage.commands,
  baselineRss,
  peakRss: peak.peak,
  peakSource: peak.source,
  sampledPeakRss: peak.sampledPeak,
  heapUsedPeak: peak.heapUsedPeak,
  newSpacePeak: peak.newSpacePeak,
  oldSpacePeak: peak.oldSpacePeak,
};
console.log(`${RESULT_MARKER}${JSON.stringify(result)}`);
// SDK keep-alive sockets must not hold the process open.
process.exit(0);
