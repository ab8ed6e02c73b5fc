import { randomUUID } from 'node:crypto';
import { clock } from '../../clock';
import { dynamoMeter } from '../../db/meter';
import { beginRequest, logger } from '../../logger';
import { captureColdStart, publishRequestMetrics } from '../../metrics';
import { flushUsageIfDue, meterRequest } from '../../usage/request-meter';
import type { HttpMiddleware, HttpRequest } from '../context';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * Lower-cased spellings of header names seen so far: the same few dozen names arrive on every
 * request, and lower-casing one allocates a new string each time. Bounded, since clients choose
 * the names.
 */
const lowerCased = new Map<string, string>();
const LOWER_CASED_MAX = 512;

function lowerCase(name: string): string {
  let lower = lowerCased.get(name);
  if (lower === undefined) {
    lower = name.toLowerCase();
    if (lowerCased.size < LOWER_CASED_MAX) lowerCased.set(name, lower);
  }
  return lower;
}

/** Lower-cased header names; API Gateway may send `null` for an absent map. */
export function normalizeHeaders(raw: Record<string, string | undefined> | null): Record<string, string> {
  const headers: Record<string, string> = {};
  if (!raw) return headers;
  for (const name in raw) {
    const value = raw[name];
    if (value !== undefined) headers[lowerCase(name)] = value;
  }
  return headers;
}

function finish(request: HttpRequest): Promise<void> {
  const { state } = request.context;
  const response = request.response;
  if (response) {
    // In place: the response's headers object is ours, and a copy per request shows in the profile.
    response.headers ??= {};
    const headers = response.headers;
    // The stack's headers (the credential's RateLimit-*) unless the answer reports a limit of its
    // own (team creation) that is closer to running out: the client sees the tighter one.
    const own = headers['RateLimit-Remaining'];
    if (own === undefined) Object.assign(headers, state.responseHeaders);
    else {
      const shared = state.responseHeaders['RateLimit-Remaining'];
      const keepOwn = shared === undefined || Number(own) <= Number(shared);
      for (const [name, value] of Object.entries(state.responseHeaders))
        if (!(keepOwn && name.startsWith('RateLimit-'))) headers[name] = value;
    }
    headers['X-Request-Id'] = state.requestId;
  }
  const caller = state.caller;
  const status = response?.statusCode ?? 500;
  const durationMs = clock.nowMs() - state.startedAtMs;
  const route = state.route?.operationId ?? 'unmatched';
  const dynamo = dynamoMeter.current;
  publishRequestMetrics(route, {
    status,
    latencyMs: durationMs,
    dynamoDbRetries: dynamo.attempts - dynamo.commands,
    dynamoDbThrottles: dynamo.throttles,
  });
  // The access line: what the saved Logs Insights queries read (infra/constructs/log-queries.ts).
  logger.info('request', {
    method: request.event.httpMethod,
    path: request.event.path,
    route,
    status,
    durationMs,
    callerKind: caller?.kind,
    credentialId: caller && 'credentialId' in caller ? caller.credentialId : undefined,
    dynamoCommands: dynamo.commands,
    dynamoRequests: dynamo.attempts,
    dynamoThrottles: dynamo.throttles,
    readCapacityUnits: dynamo.readUnits,
    writeCapacityUnits: dynamo.writeUnits,
  });
  // Usage: every request authenticated as an organization (on the service clock's day), written
  // with the instance's next flush (timed by the machine's clock: at most one write an interval).
  if (caller && 'orgId' in caller)
    meterRequest({
      orgId: caller.orgId,
      route,
      status,
      readUnits: dynamo.readUnits,
      writeUnits: dynamo.writeUnits,
      nowMs: clock.nowMs(),
    });
  // A request shed for a busy table (503) leaves the flush to the instance's timer: no extra write
  // on its path while the table refuses.
  return status === 503 ? Promise.resolve() : flushUsageIfDue(Date.now()).catch(() => undefined);
}

/**
 * Outermost middleware: gives the request its id (a well-formed client `X-Request-Id` is kept so
 * integrators can correlate, otherwise API Gateway's), normalizes headers, tags every log line with
 * the id, and on the way out stamps `X-Request-Id` and writes one access-log line.
 */
export const requestContext = (): HttpMiddleware => ({
  before: (request) => {
    const headers = normalizeHeaders(request.event.headers);
    const clientId = headers['x-request-id'];
    const requestId =
      clientId && CLIENT_REQUEST_ID.test(clientId)
        ? clientId
        : request.event.requestContext?.requestId || randomUUID();
    request.context.state = { requestId, startedAtMs: clock.nowMs(), headers, responseHeaders: {} };
    beginRequest(requestId);
    dynamoMeter.reset();
    captureColdStart();
  },
  after: finish,
  onError: finish,
});
