import { randomUUID } from 'node:crypto';
import { type Decision, evaluate, type Statement } from '../../iam/policy';
import type { Check } from './checks';
import type { Identity } from './identity';

/**
 * The verdict on a call and the refusal AWS would send: a denied call must fail locally exactly as
 * it would deployed (status, error code, message), so the code's error handling is what gets
 * tested. Shared by the SDK middleware (enforce.ts) and the local key service (key-service.ts),
 * which answers KMS and Secrets Manager itself.
 */

export interface Denial {
  action: string;
  resource: string;
  decision: Exclude<Decision, 'allowed'>;
}

/** The first check the role does not grant. */
export function firstDenial(checks: readonly Check[], statements: readonly Statement[]): Denial | undefined {
  for (const check of checks) {
    const decisions = check.resources.map((resource) => evaluate(statements, check.action, resource));
    if (decisions.includes('allowed')) continue;
    const explicit = decisions.indexOf('explicit-deny');
    const at = explicit >= 0 ? explicit : 0;
    return {
      action: check.action,
      resource: check.resources[at] ?? '',
      decision: decisions[at] === 'explicit-deny' ? 'explicit-deny' : 'implicit-deny',
    };
  }
  return undefined;
}

/** AWS's sentence for a denied request. */
export function denialMessage(
  denial: Denial,
  identity: Pick<Identity, 'account' | 'roleName' | 'functionName'>,
): string {
  const caller = `arn:aws:sts::${identity.account}:assumed-role/${identity.roleName}/${identity.functionName}`;
  const reason =
    denial.decision === 'explicit-deny'
      ? `with an explicit deny in an identity-based policy`
      : `because no identity-based policy allows the ${denial.action} action`;
  return `User: ${caller} is not authorized to perform: ${denial.action} on resource: ${denial.resource} ${reason}`;
}

export interface DeniedResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** The HTTP answer each service gives a request its caller is not allowed to make. */
export function deniedResponse(service: string, message: string): DeniedResponse {
  const requestId = randomUUID();
  const json = (statusCode: number, body: Record<string, string>, headers: Record<string, string> = {}) => ({
    statusCode,
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': requestId, ...headers },
    body: JSON.stringify(body),
  });
  switch (service) {
    case 'dynamodb':
      return json(400, { __type: 'com.amazon.coral.service#AccessDeniedException', Message: message });
    case 'sqs':
      // The JSON protocol's answer, with the query-compatible code older clients know it by.
      return json(
        400,
        { __type: 'com.amazon.coral.service#AccessDeniedException', message },
        { 'x-amzn-query-error': 'AccessDenied;Sender' },
      );
    case 'kms':
    case 'secretsmanager':
      return {
        ...json(400, { __type: 'AccessDeniedException', message }),
        headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': requestId },
      };
    case 's3':
      return {
        statusCode: 403,
        headers: { 'content-type': 'application/xml', 'x-amz-request-id': requestId },
        body: `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>${message.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</Message><RequestId>${requestId}</RequestId><HostId>local</HostId></Error>`,
      };
    case 'apigatewaymanagementapi':
      return {
        statusCode: 403,
        headers: {
          'content-type': 'application/json',
          'x-amzn-errortype': 'ForbiddenException',
          'x-amzn-requestid': requestId,
        },
        body: JSON.stringify({ message: 'Forbidden' }),
      };
    default:
      // restJson1 (SESv2 among them): the error type in a header, 403.
      return {
        statusCode: 403,
        headers: {
          'content-type': 'application/json',
          'x-amzn-errortype': 'AccessDeniedException',
          'x-amzn-requestid': requestId,
        },
        body: JSON.stringify({ message }),
      };
  }
}
