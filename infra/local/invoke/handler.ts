import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { collectStreamed, isStreamingHandler, type ResponseSink } from '../../../shared/http/streaming';
import type { lambdaContext } from '../lambda-event';
import type { LocalRuntime } from '../runtime';
import type { InvokeSession } from './session';
import { ROOT } from './targets';

/**
 * One way to call any function, whichever way the session runs it: in its isolate (its template
 * environment and role, as `npm start` runs it) or, for unit tests that mock the SDK, in this
 * process. A streamed answer is collected either way, so it shows like any other.
 */

export type Handler = (event: unknown, context: ReturnType<typeof lambdaContext>) => Promise<unknown>;

/** Runs a function in its isolate; a streamed answer is collected, so it shows like any other. */
async function isolatedHandler(runtime: LocalRuntime, name: string): Promise<Handler> {
  const isolate = runtime.get(name);
  await isolate.start();
  return async (event) => {
    const chunks: Buffer[] = [];
    let statusCode = 200;
    let headers: Record<string, string | number> = {};
    let failure: Error | undefined;
    const sink: ResponseSink = Object.assign(new EventEmitter(), {
      writeHead: (status: number, head: Record<string, string | number>) => {
        statusCode = status;
        headers = head;
      },
      write: (chunk: Buffer) => chunks.push(chunk) > 0,
      end: (callback?: () => void) => callback?.(),
      destroy: (error?: Error) => {
        failure = error;
      },
    });
    const result = await isolate.invoke(event, sink);
    if (failure) throw failure;
    return result !== undefined
      ? result
      : { statusCode, headers, body: Buffer.concat(chunks).toString('utf8') };
  };
}

export async function loadHandler(
  session: Pick<InvokeSession, 'runtime'>,
  target: { name: string; entry: string },
): Promise<Handler> {
  if (session.runtime) return isolatedHandler(session.runtime, target.name);
  const entry = target.entry;
  const module = (await import(pathToFileURL(join(ROOT, entry)).href)) as { handler: Handler };
  const { handler } = module;
  if (typeof handler !== 'function') throw new Error(`${entry} exports no handler`);
  // A streaming group (exports): its streamed answer is collected, so it shows like any other.
  if (isStreamingHandler(handler)) return (event, context) => collectStreamed(handler, event, context);
  return handler;
}
