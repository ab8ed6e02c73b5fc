import type { APIGatewayProxyResult } from 'aws-lambda';
import type { Invocation } from './invocation';

/**
 * How an invocation's outcome is shown: stdout carries the result alone, as JSON a script can read
 * (an API answer with its body parsed), stderr one line for a person (status or batch failures,
 * and the time taken).
 */

function parsedBody(result: APIGatewayProxyResult): unknown {
  if (result.isBase64Encoded) return result.body;
  const type = Object.entries(result.headers ?? {}).find(
    ([name]) => name.toLowerCase() === 'content-type',
  )?.[1];
  if (typeof result.body === 'string' && (/json/i.test(String(type ?? '')) || /^[[{]/.test(result.body))) {
    try {
      return JSON.parse(result.body);
    } catch {
      // Not JSON after all: shown as text.
    }
  }
  return result.body;
}

/** What stdout shows: an API answer with its body parsed, a worker's batch response as it is. */
export function presentResult(invocation: Invocation): unknown {
  const { target, result } = invocation;
  if (
    target.kind === 'worker' ||
    result === null ||
    typeof result !== 'object' ||
    !('statusCode' in result)
  ) {
    return result ?? null;
  }
  const answer = result as APIGatewayProxyResult;
  return { ...answer, body: parsedBody(answer) };
}

/** One line for stderr: the status, or the batch item failures. */
export function summarize(invocation: Invocation): string {
  const timing = `${invocation.durationMs.toFixed(1)} ms${
    invocation.initMs >= 1 ? `, init ${invocation.initMs.toFixed(0)} ms` : ''
  }`;
  const result = invocation.result as Partial<APIGatewayProxyResult> & {
    batchItemFailures?: { itemIdentifier: string }[];
  };
  if (invocation.target.kind === 'worker') {
    const failures = result?.batchItemFailures ?? [];
    return failures.length === 0
      ? `${invocation.target.name}: no batch item failures (${timing})`
      : `${invocation.target.name}: ${failures.length} batch item failure(s): ${failures
          .map((failure) => failure.itemIdentifier)
          .join(', ')} (${timing})`;
  }
  return `${invocation.target.name}: ${result?.statusCode ?? '?'} (${timing})`;
}
