import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';

export interface ProxyEventInput {
  method: string;
  /** API Gateway's resource template, e.g. `/api/conversations/{id}`. */
  resource: string;
  /** The concrete path; defaults to the resource. */
  path?: string;
  /** Header pairs in arrival order (repeats allowed), or a plain map. */
  headers?: readonly (readonly [string, string])[] | Record<string, string>;
  /** Query pairs in arrival order, or a plain map. */
  query?: readonly (readonly [string, string])[] | Record<string, string> | null;
  pathParameters?: Record<string, string> | null;
  body?: string | null;
  isBase64Encoded?: boolean;
  requestId?: string;
  sourceIp?: string;
  protocol?: string;
  stage?: string;
  /** What precedes the path in `requestContext.path`; default `/<stage>` (the execute-api endpoint). */
  basePath?: string;
}

function pairs(
  from: ProxyEventInput['headers'] | ProxyEventInput['query'],
): readonly (readonly [string, string])[] {
  if (!from) return [];
  return Array.isArray(from) ? from : Object.entries(from);
}

/** Single- and multi-value maps, as API Gateway fills both (the last value wins in the single map). */
function valueMaps(entries: readonly (readonly [string, string])[]) {
  const single: Record<string, string> = {};
  const multi: Record<string, string[]> = {};
  for (const [name, value] of entries) {
    single[name] = value;
    const values = multi[name] ?? [];
    values.push(value);
    multi[name] = values;
  }
  return { single, multi };
}

/**
 * The event API Gateway's REST proxy integration sends to a function: the one shape the local
 * gateway, the sample events, the unit tests and the bench all build.
 */
export function proxyEvent(input: ProxyEventInput): APIGatewayProxyEvent {
  const path = input.path ?? input.resource;
  const headers = valueMaps(pairs(input.headers));
  const query = valueMaps(pairs(input.query));
  const hasQuery = Object.keys(query.single).length > 0;
  const stage = input.stage ?? 'v1';
  const userAgent =
    Object.entries(headers.single).find(([name]) => name.toLowerCase() === 'user-agent')?.[1] ?? null;
  return {
    resource: input.resource,
    path,
    httpMethod: input.method,
    headers: headers.single,
    multiValueHeaders: headers.multi,
    queryStringParameters: hasQuery ? query.single : null,
    multiValueQueryStringParameters: hasQuery ? query.multi : null,
    pathParameters: input.pathParameters ?? null,
    stageVariables: null,
    body: input.body ?? null,
    isBase64Encoded: input.isBase64Encoded ?? false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      protocol: input.protocol ?? 'HTTP/1.1',
      httpMethod: input.method,
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
        sourceIp: input.sourceIp ?? '127.0.0.1',
        user: null,
        userAgent,
        userArn: null,
      },
      // The local gateway serves at the root, as a custom domain mapped without a base path does.
      path: input.basePath === undefined ? `/${stage}${path}` : `${input.basePath}${path}`,
      stage,
      requestId: input.requestId ?? randomUUID(),
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: input.resource,
    },
  };
}

/** A Node HTTP request as API Gateway would hand it to the function. */
export function toProxyEvent(input: {
  request: IncomingMessage;
  url: URL;
  body: Buffer;
  resource: string;
  pathParameters: Record<string, string> | null;
}): APIGatewayProxyEvent {
  const { request, url, body } = input;
  const headerPairs: [string, string][] = [];
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    headerPairs.push([request.rawHeaders[i] ?? '', request.rawHeaders[i + 1] ?? '']);
  }
  const text = body.toString('utf8');
  // API Gateway passes binary (non-UTF-8) bodies base64-encoded.
  const isBase64Encoded = body.length > 0 && Buffer.from(text, 'utf8').length !== body.length;
  // API Gateway tells the function the scheme the client used; the local gateway speaks plain HTTP.
  if (!headerPairs.some(([name]) => name.toLowerCase() === 'x-forwarded-proto'))
    headerPairs.push(['X-Forwarded-Proto', 'http']);
  return proxyEvent({
    method: request.method ?? 'GET',
    resource: input.resource,
    path: url.pathname,
    basePath: '',
    headers: headerPairs,
    query: [...url.searchParams],
    pathParameters: input.pathParameters,
    body: body.length === 0 ? null : isBase64Encoded ? body.toString('base64') : text,
    isBase64Encoded,
    sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
    protocol: `HTTP/${request.httpVersion}`,
  });
}

export function lambdaContext(functionName = 'local', timeoutMs = 29_000): Context {
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
