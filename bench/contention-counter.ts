import { Worker } from 'node:worker_threads';

/**
 * What DynamoDB was asked during a burst, counted on the wire: a pass-through HTTP proxy in front of
 * DynamoDB Local, in a worker thread of its own (so it does not share the gateway's event loop),
 * which the functions reach through `AWS_ENDPOINT_URL_DYNAMODB`. It sees every function's calls
 * (each runs in an isolate of its own, out of reach of an in-process middleware) and counts, per
 * operation: calls, SDK retries (the `amz-sdk-request: attempt=N` header, N > 1), failed
 * conditions and transaction conflicts (a cancelled transaction's reasons, or a single write
 * refused because a transaction holds the item). Counts do not depend on the machine's load;
 * latencies do.
 */

export interface OperationCounts {
  calls: number;
  /** Attempts the SDK sent again (attempt > 1) of this operation. */
  sdkRetries: number;
  /** UpdateItem/PutItem refused by their condition; TransactWriteItems cancelled by a failed condition. */
  conditionFailed: number;
  /** TransactWriteItems cancelled by a TransactionConflict; single writes refused by an ongoing transaction. */
  transactionConflicts: number;
  /** Other errors, by type. */
  otherErrors: Record<string, number>;
}

export interface WireCounts {
  byOperation: Record<string, OperationCounts>;
}

const WORKER = `
const http = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const target = new URL(workerData.target);
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
let counts = {};
const entry = (op) => (counts[op] ??= { calls: 0, sdkRetries: 0, conditionFailed: 0, transactionConflicts: 0, otherErrors: {} });
parentPort.on('message', (message) => {
  if (message === 'reset') counts = {};
  if (message === 'read') parentPort.postMessage(counts);
});
const server = http.createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks);
    const op = String(request.headers['x-amz-target'] ?? 'unknown').split('.').pop();
    const attempt = /attempt=(\\d+)/.exec(String(request.headers['amz-sdk-request'] ?? ''));
    const upstream = http.request(
      { host: target.hostname, port: target.port, path: request.url, method: request.method, headers: request.headers, agent },
      (answer) => {
        const parts = [];
        answer.on('data', (part) => parts.push(part));
        answer.on('end', () => {
          const text = Buffer.concat(parts);
          const counted = entry(op);
          counted.calls++;
          if (attempt && Number(attempt[1]) > 1) counted.sdkRetries++;
          if (answer.statusCode >= 400) {
            let type = 'unknown';
            let reasons = '';
            try {
              const parsed = JSON.parse(text.toString('utf8'));
              type = String(parsed.__type ?? '').split('#').pop();
              reasons = String(parsed.message ?? parsed.Message ?? '');
            } catch {}
            if (type === 'ConditionalCheckFailedException') counted.conditionFailed++;
            else if (type === 'TransactionConflictException') counted.transactionConflicts++;
            else if (type === 'TransactionCanceledException') {
              if (reasons.includes('ConditionalCheckFailed')) counted.conditionFailed++;
              else if (reasons.includes('TransactionConflict')) counted.transactionConflicts++;
              else counted.otherErrors[type] = (counted.otherErrors[type] ?? 0) + 1;
            } else {
              counted.otherErrors[type] = (counted.otherErrors[type] ?? 0) + 1;
              if (workerData.verbose) console.error(op, answer.statusCode, text.toString('utf8').slice(0, 300));
            }
          }
          response.writeHead(answer.statusCode, answer.headers);
          response.end(text);
        });
      },
    );
    upstream.on('error', (error) => {
      response.destroy(error);
    });
    upstream.end(body);
  });
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
`;

export interface WireCounter {
  endpoint: string;
  reset(): void;
  read(): Promise<WireCounts>;
  close(): Promise<void>;
}

/** Starts the counting proxy in front of `target` (DynamoDB Local's endpoint). */
export async function startWireCounter(target: string): Promise<WireCounter> {
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: { target, verbose: Boolean(process.env.WIRE_VERBOSE) },
  });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', (message: { port: number }) => resolve(message.port));
    worker.once('error', reject);
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    reset: () => worker.postMessage('reset'),
    read: () =>
      new Promise((resolve) => {
        worker.once('message', (byOperation: Record<string, OperationCounts>) => resolve({ byOperation }));
        worker.postMessage('read');
      }),
    close: async () => {
      await worker.terminate();
    },
  };
}
