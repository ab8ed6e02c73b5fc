import { Writable } from 'node:stream';
import type { APIGatewayProxyResult, Context } from 'aws-lambda';

/**
 * Lambda response streaming. In AWS the Node.js runtime provides the global `awslambda`
 * (`streamifyResponse`, `HttpResponseStream.from`), which middy's `executionModeStreamifyResponse` uses; API
 * Gateway (REST, `responseTransferMode: STREAM`) reads the prelude (status, headers) and passes the
 * bytes on as they come. Elsewhere (the local gateway, `npm run invoke`, tests, the bench) this module
 * installs a stand-in with the same two calls before a streaming handler is built, and the host hands
 * the handler a `LocalResponseStream` writing to its own sink with back-pressure.
 */

export interface ResponsePrelude {
  statusCode?: number;
  headers?: Record<string, string | number | boolean | undefined>;
}

/** Where a local host sends a streamed answer: what `http.ServerResponse` offers. */
export interface ResponseSink {
  writeHead(statusCode: number, headers: Record<string, string | number>): unknown;
  write(chunk: Buffer): boolean;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  end(callback?: () => void): unknown;
  destroy(error?: Error): unknown;
}

export type StreamingHandler = (event: unknown, responseStream: Writable, context: Context) => Promise<void>;

const STREAMING = Symbol.for('conversation-service.streaming-handler');

/** The response stream a local host gives a streaming handler. */
export class LocalResponseStream extends Writable {
  private prelude: ResponsePrelude = {};
  private headSent = false;
  private ending = false;

  constructor(private readonly sink: ResponseSink) {
    super();
    // The client went away mid-answer: the producer must stop (and not wait for a drain forever).
    sink.once('close', () => {
      if (!this.ending && !this.destroyed) this.destroy(new Error('The client closed the connection'));
    });
  }

  setPrelude(prelude: ResponsePrelude): void {
    this.prelude = prelude;
  }

  private sendHead(): void {
    if (this.headSent) return;
    this.headSent = true;
    const headers: Record<string, string | number> = {};
    for (const [name, value] of Object.entries(this.prelude.headers ?? {})) {
      if (value !== undefined) headers[name] = typeof value === 'boolean' ? String(value) : value;
    }
    this.sink.writeHead(this.prelude.statusCode ?? 200, headers);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.sendHead();
    if (this.sink.write(chunk)) callback();
    else this.sink.once('drain', () => callback());
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.ending = true;
    this.sendHead();
    this.sink.end(() => callback());
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // A failure after the first byte must reach the client as a broken response, not a short file.
    if (error) this.sink.destroy(error);
    callback(error);
  }
}

interface AwsLambdaGlobal {
  streamifyResponse<T>(handler: T): T;
  HttpResponseStream: { from(stream: Writable, prelude: ResponsePrelude): Writable };
}

const localRuntime: AwsLambdaGlobal = {
  streamifyResponse<T>(handler: T): T {
    Object.defineProperty(handler, STREAMING, { value: true });
    return handler;
  },
  HttpResponseStream: {
    from(stream, prelude) {
      if (!(stream instanceof LocalResponseStream)) {
        throw new Error('HttpResponseStream.from: not a local response stream');
      }
      stream.setPrelude(prelude);
      return stream;
    },
  },
};

/** Installs the local stand-in unless the Lambda runtime's own `awslambda` is there. */
export function ensureStreamingRuntime(): void {
  // The runtime's global (typed by @types/aws-lambda as a namespace), complete only inside Lambda;
  // elsewhere other libraries may have made it already, for their own members (InvokeStore).
  const scope = globalThis as { awslambda?: Partial<AwsLambdaGlobal> };
  scope.awslambda ??= {};
  scope.awslambda.streamifyResponse ??= localRuntime.streamifyResponse;
  scope.awslambda.HttpResponseStream ??= localRuntime.HttpResponseStream;
}

/** True for a handler made with `streamifyResponse` by the local stand-in. */
export function isStreamingHandler(handler: unknown): handler is StreamingHandler {
  return typeof handler === 'function' && (handler as { [STREAMING]?: boolean })[STREAMING] === true;
}

/**
 * Runs a streaming handler and collects its answer as a buffered result, for hosts that print or
 * compare whole answers (`npm run invoke`, sample-event tests). Not for large answers.
 */
export async function collectStreamed(
  handler: StreamingHandler,
  event: unknown,
  context: Context,
): Promise<APIGatewayProxyResult> {
  const chunks: Buffer[] = [];
  let statusCode = 200;
  let headers: Record<string, string | number> = {};
  let failure: Error | undefined;
  const sink: ResponseSink = {
    writeHead: (status, head) => {
      statusCode = status;
      headers = head;
    },
    write: (chunk) => {
      chunks.push(chunk);
      return true;
    },
    once: () => undefined,
    end: (callback) => callback?.(),
    destroy: (error) => {
      failure = error;
    },
  };
  await handler(event, new LocalResponseStream(sink), context);
  if (failure) throw failure;
  return { statusCode, headers, body: Buffer.concat(chunks).toString('utf8') };
}
