import type { APIGatewayProxyResult } from 'aws-lambda';
import { authenticate } from '../../shared/auth/authenticate';
import { clock } from '../../shared/clock';
import { connections } from '../../shared/db/connections';
import { ServiceError } from '../../shared/errors';
import { statusOfCode } from '../../shared/http/errors';
import { beginRequest, logger } from '../../shared/logger';

/** The parts of an API Gateway WebSocket event this handler reads. */
export interface WebSocketEvent {
  requestContext: { routeKey: string; connectionId: string; requestId?: string };
  queryStringParameters?: Record<string, string | undefined> | null;
}

/**
 * The realtime channel's connection handler (API Gateway WebSocket routes `$connect`,
 * `$disconnect`, `$default`). A client connects with `?token=` an operator session (`svc_os_…`) or a
 * visitor token (`svc_vt_…`); the connection is recorded under its audience: operators receive
 * every notice of their organization, a visitor only the notices of its own conversations (never
 * note notices). Clients send nothing; whatever they send is ignored. A closed connection is
 * forgotten when a push finds it gone, or after 2 hours.
 */
export const handler = async (event: WebSocketEvent): Promise<APIGatewayProxyResult> => {
  const { routeKey, connectionId, requestId } = event.requestContext;
  beginRequest(requestId ?? connectionId);
  if (routeKey !== '$connect') return { statusCode: 200, body: '' };
  const token = event.queryStringParameters?.token;
  if (!token) return { statusCode: 401, body: 'token required' };
  try {
    const { caller } = await authenticate({ authorization: `Bearer ${token}` }, ['operator', 'visitor']);
    if (caller.kind !== 'operator' && caller.kind !== 'visitor')
      return { statusCode: 403, body: 'forbidden' };
    await connections.add({
      connectionId,
      orgId: caller.orgId,
      kind: caller.kind,
      principalId: caller.kind === 'operator' ? caller.operatorId : caller.visitorId,
      connectedAt: clock.nowIso(),
    });
    return { statusCode: 200, body: '' };
  } catch (error) {
    if (error instanceof ServiceError) return { statusCode: statusOfCode[error.code], body: error.code };
    logger.error('realtime connect failed', { error: error as Error });
    return { statusCode: 500, body: '' };
  }
};
