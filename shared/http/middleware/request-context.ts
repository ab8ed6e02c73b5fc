import { randomUUID } from 'node:crypto';
import { clock } from '../../clock';
import { dynamoMeter } from '../../db/meter';
import { log } from '../../logger';
import {
  captureColdStart,
  publishRequestMetrics,
  type RequestFigures,
  requestMetricsMembers,
} from '../../metrics';
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

function finish(request: HttpRequest): void {
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
  // One line: the access log carries the request's metrics (EMF) when it is written (INFO).
  const figures = requestFigures(status, durationMs, dynamo.attempts - dynamo.commands, dynamo.throttles);
  if (!log.infoEnabled) {
    publishRequestMetrics(route, figures);
    return;
  }
  log.infoWith(
    'request',
    {
      // requestId and orgId come first, from the logger's request keys.
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
    },
    requestMetricsMembers(route, figures),
  );
}

/** Status classes as 0 or 1 each, so a class's Average is its rate among the route's requests. */
function requestFigures(
  status: number,
  durationMs: number,
  retries: number,
  throttles: number,
): RequestFigures {
  const statusClass = Math.floor(status / 100);
  return {
    latencyMs: durationMs,
    status2xx: statusClass === 2 || statusClass === 3 ? 1 : 0,
    status4xx: statusClass === 4 ? 1 : 0,
    status5xx: statusClass >= 5 ? 1 : 0,
    conflicts: status === 409 || status === 412 ? 1 : 0,
    dynamoDbRetries: retries,
    dynamoDbThrottles: throttles,
  };
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
    log.beginRequest(requestId);
    dynamoMeter.reset();
    captureColdStart();
  },
  after: finish,
  onError: finish,
});
