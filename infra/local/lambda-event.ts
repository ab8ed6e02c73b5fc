import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';

/**
 * Turns a Node HTTP request into the event API Gateway's REST proxy integration sends, so the
 * handlers run locally exactly as deployed.
 */
export function toProxyEvent(input: {
  request: IncomingMessage;
  url: URL;
  body: Buffer;
  resource: string;
  pathParameters: Record<string, string> | null;
}): APIGatewayProxyEvent {
  const { request, url, body } = input;
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    const name = request.rawHeaders[i] ?? '';
    const value = request.rawHeaders[i + 1] ?? '';
    headers[name] = value;
    multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), value];
  }
  const query: Record<string, string> = {};
  const multiQuery: Record<string, string[]> = {};
  for (const [name, value] of url.searchParams) {
    query[name] = value;
    multiQuery[name] = [...(multiQuery[name] ?? []), value];
  }
  const hasQuery = Object.keys(query).length > 0;
  const text = body.toString('utf8');
  // API Gateway passes binary (non-UTF-8) bodies base64-encoded.
  const isBase64Encoded = body.length > 0 && Buffer.from(text, 'utf8').length !== body.length;
  const requestId = randomUUID();
  return {
    resource: input.resource,
    path: url.pathname,
    httpMethod: request.method ?? 'GET',
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiQuery : null,
    pathParameters: input.pathParameters,
    stageVariables: null,
    body: body.length === 0 ? null : isBase64Encoded ? body.toString('base64') : text,
    isBase64Encoded,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      protocol: `HTTP/${request.httpVersion}`,
      httpMethod: request.method ?? 'GET',
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
        user: null,
        userAgent: request.headers['user-agent'] ?? null,
        userArn: null,
      },
      path: `/v1${url.pathname}`,
      stage: 'v1',
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: input.resource,
    },
  };
}

export function lambdaContext(functionName: string, timeoutMs = 29_000): Context {
  const startedAt = Date.now();
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, timeoutMs - (Date.now() - startedAt)),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
