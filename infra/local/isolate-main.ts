import { EventEmitter } from 'node:events';
import { pathToFileURL } from 'node:url';
import { parentPort } from 'node:worker_threads';
import { clock } from '../../shared/clock';
import type { dynamoMeter as DynamoMeter, InvocationUsage } from '../../shared/db/meter';
import {
  ensureStreamingRuntime,
  isStreamingHandler,
  LocalResponseStream,
  type ResponseSink,
} from '../../shared/http/streaming';
import { enforceIam } from './iam/enforce';
import type { Identity } from './iam/identity';
import { lambdaContext } from './lambda-event';

/**
 * Inside a function's isolate: what the Lambda runtime does for one function instance. Loads the
 * handler once (module state lives as long as the isolate), hands it each event the host sends with
 * a Lambda context, and returns its result, or its streamed answer chunk by chunk. Every AWS SDK
 * client the function makes is held to its role (iam/enforce.ts) before the handler loads. Each
 * invocation's DynamoDB usage (shared/db/meter.ts: commands, round trips, capacity units; with
 * `trace`, every command and the code that sent it) is measured on its own and goes back with its
 * outcome, so the host can tell what each request cost although the calls left from this isolate.
 */

export type ToIsolate =
  | {
      type: 'init';
      entry: string;
      functionName: string;
      timeoutMs: number;
      identity: Identity | null;
      /** The build's `process.env.X` defines (infra/function-tuning.ts), in force before the handler loads. */
      defines: Record<string, string>;
      /** Trace every DynamoDB command of each invocation (the bench), not only count them. */
      trace: boolean;
    }
  | { type: 'invoke'; id: number; event: unknown; streaming: boolean }
  | { type: 'ack'; id: number }
  | { type: 'abort'; id: number }
  | { type: 'clock'; offsetMs: number }
  | { type: 'trace'; on: boolean };

export type FromIsolate =
  | { type: 'ready' }
  | { type: 'init-error'; error: SerializedError }
  | { type: 'result'; id: number; result: unknown; usage: InvocationUsage }
  | { type: 'error'; id: number; error: SerializedError; usage: InvocationUsage }
  | { type: 'head'; id: number; statusCode: number; headers: Record<string, string | number> }
  | { type: 'chunk'; id: number; chunk: Uint8Array }
  | { type: 'end'; id: number; usage: InvocationUsage }
  | { type: 'stream-error'; id: number; error: SerializedError; usage: InvocationUsage };

export interface SerializedError {
  name: string;
  message: string;
  stack?: string | undefined;
}

const serialize = (error: unknown): SerializedError =>
  error instanceof Error
    ? { name: error.name, message: error.message, stack: error.stack }
    : { name: 'Error', message: String(error) };

const post = (message: FromIsolate) => {
  if (parentPort) parentPort.postMessage(message);
  else process.send?.(message);
};

type Handler = (event: unknown, ...rest: unknown[]) => Promise<unknown>;
let handler: Handler | undefined;
let functionName = 'local';
let timeoutMs = 29_000;
let meter: typeof DynamoMeter | undefined;
let trace = false;

/** Unacknowledged chunks a stream may have in flight before it waits (back-pressure across the isolate). */
const IN_FLIGHT = 8;

class IsolateSink extends EventEmitter implements ResponseSink {
  private inFlight = 0;
  constructor(
    private readonly id: number,
    private readonly usage: () => InvocationUsage,
  ) {
    super();
  }
  writeHead(statusCode: number, headers: Record<string, string | number>) {
    post({ type: 'head', id: this.id, statusCode, headers });
  }
  write(chunk: Buffer): boolean {
    this.inFlight += 1;
    post({ type: 'chunk', id: this.id, chunk: new Uint8Array(chunk) });
    return this.inFlight < IN_FLIGHT;
  }
  ack() {
    this.inFlight -= 1;
    if (this.inFlight === IN_FLIGHT - 1) this.emit('drain');
  }
  end(callback?: () => void) {
    post({ type: 'end', id: this.id, usage: this.usage() });
    callback?.();
  }
  destroy(error?: Error) {
    post({
      type: 'stream-error',
      id: this.id,
      error: serialize(error ?? new Error('destroyed')),
      usage: this.usage(),
    });
  }
}

const sinks = new Map<number, IsolateSink>();

const noUsage = (): InvocationUsage => ({
  commands: 0,
  attempts: 0,
  throttles: 0,
  readUnits: 0,
  writeUnits: 0,
  trips: 0,
});

async function invoke(id: number, event: unknown, streaming: boolean): Promise<void> {
  const measured = meter?.invocation({ trace });
  const usage = () => measured?.usage ?? noUsage();
  try {
    const run = handler;
    if (!run) throw new Error('the isolate has no handler');
    const context = lambdaContext(functionName, timeoutMs);
    if (streaming && isStreamingHandler(run)) {
      const sink = new IsolateSink(id, usage);
      sinks.set(id, sink);
      try {
        const answer = () => run(event, new LocalResponseStream(sink), context);
        await (measured ? measured.run(answer) : answer());
      } finally {
        sinks.delete(id);
      }
      return;
    }
    const answer = () => run(event, context);
    const result = await (measured ? measured.run(answer) : answer());
    post({ type: 'result', id, result, usage: usage() });
  } catch (error) {
    post({ type: 'error', id, error: serialize(error), usage: usage() });
  }
}

async function receive(message: ToIsolate): Promise<void> {
  switch (message.type) {
    case 'init':
      try {
        functionName = message.functionName;
        timeoutMs = message.timeoutMs;
        if (message.identity) enforceIam(message.identity);
        for (const [name, value] of Object.entries(message.defines)) process.env[name] = value;
        trace = message.trace;
        // After the defines, as every module the handler loads; the handler's client meters into it.
        ({ dynamoMeter: meter } = await import('../../shared/db/meter'));
        ensureStreamingRuntime();
        const module = (await import(pathToFileURL(message.entry).href)) as { handler?: Handler };
        if (typeof module.handler !== 'function') throw new Error(`${message.entry} exports no handler`);
        handler = module.handler;
        post({ type: 'ready' });
      } catch (error) {
        post({ type: 'init-error', error: serialize(error) });
      }
      return;
    case 'invoke':
      void invoke(message.id, message.event, message.streaming);
      return;
    case 'ack':
      sinks.get(message.id)?.ack();
      return;
    case 'abort':
      sinks.get(message.id)?.emit('close');
      return;
    case 'clock':
      clock.reset();
      clock.advance(message.offsetMs);
      return;
    case 'trace':
      trace = message.on;
      return;
  }
}

if (parentPort) parentPort.on('message', (message: ToIsolate) => void receive(message));
else process.on('message', (message) => void receive(message as ToIsolate));
// A child process ends with its host.
process.on('disconnect', () => process.exit(0));
