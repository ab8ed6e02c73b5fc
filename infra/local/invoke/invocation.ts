import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { lambdaContext } from '../lambda-event';
import { placeholderValues } from './demo-placeholders';
import { loadHandler } from './handler';
import { fillPlaceholders } from './placeholders';
import type { InvokeSession } from './session';
import { apiGroupOf, findTarget, type InvokeTarget, inferTarget } from './targets';

/**
 * One invocation, end to end: an event file read, addressed and filled, then handed to its
 * function with a Lambda-like context, timed as Lambda reports it (init apart from the call).
 */

export interface Invocation {
  target: InvokeTarget;
  event: unknown;
  result: unknown;
  /** Loading the function module (Lambda's "Init Duration"; 0 when already loaded). */
  initMs: number;
  durationMs: number;
}

/** The event of a file with its placeholders filled, and the function it is for. */
export async function prepareEvent(
  session: InvokeSession,
  file: string,
  targetName?: string,
): Promise<{ target: InvokeTarget; event: unknown }> {
  const text = readFileSync(file, 'utf8');
  let shape: unknown;
  try {
    // Placeholders sit inside strings, so the file parses as it is.
    shape = JSON.parse(text);
  } catch (error) {
    throw new Error(`${file} is not JSON: ${(error as Error).message}`);
  }
  let target: InvokeTarget | 'api' | undefined = targetName
    ? findTarget(targetName)
    : inferTarget(file, shape);
  if (!target) {
    throw new Error(
      targetName
        ? `unknown function or worker "${targetName}" (see --help)`
        : `cannot tell which function ${file} is for: name it first (see --help)`,
    );
  }
  const event = JSON.parse(fillPlaceholders(text, await placeholderValues(session, text)));
  const proxy = event as Partial<APIGatewayProxyEvent>;
  if (typeof proxy.httpMethod === 'string' && typeof proxy.resource === 'string') {
    const owner = await apiGroupOf({ httpMethod: proxy.httpMethod, resource: proxy.resource });
    if (target === 'api') target = findTarget(owner);
    else if (target.kind === 'api' && target.name !== owner) {
      session.progress(
        `note: API Gateway sends ${proxy.httpMethod} ${proxy.resource} to the ${owner} function, not ${target.name}`,
      );
    }
  }
  if (!target || target === 'api') throw new Error(`no function for ${file}`);
  return { target, event };
}

/** Calls the target's handler with the event and a Lambda-like context (the function's own timeout). */
export async function invokeTarget(
  session: Pick<InvokeSession, 'runtime'>,
  target: InvokeTarget,
  event: unknown,
): Promise<Invocation> {
  const loadStart = performance.now();
  const handler = await loadHandler(session, target);
  const initMs = performance.now() - loadStart;
  const start = performance.now();
  const result = await handler(event, lambdaContext(`local-${target.name}`, target.timeoutSeconds * 1000));
  return { target, event, result, initMs, durationMs: performance.now() - start };
}

export async function invokeFile(
  session: InvokeSession,
  file: string,
  targetName?: string,
): Promise<Invocation> {
  const { target, event } = await prepareEvent(session, file, targetName);
  session.progress(`invoking ${target.name} (${target.entry}) with ${relative(process.cwd(), file)}`);
  return invokeTarget(session, target, event);
}
