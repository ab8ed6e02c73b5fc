import type { APIGatewayProxyEvent, Context } from 'aws-lambda';

export interface EventOptions {
  method: string;
  /** API Gateway's resource template, e.g. `/api/widgets/{id}`. */
  resource: string;
  /** The concrete path; defaults to the resource. */
  path?: string;
  headers?: Record<string, string>;
  body?: string | null;
  isBase64Encoded?: boolean;
  pathParameters?: Record<string, string> | null;
  query?: Record<string, string> | null;
  requestId?: string;
}

/** An API Gateway REST (v1) proxy event, as the gateway would hand it to the function. */
export function apiGatewayEvent(options: EventOptions): APIGatewayProxyEvent {
  const path = options.path ?? options.resource;
  const headers = options.headers ?? {};
  const query = options.query ?? null;
  return {
    httpMethod: options.method,
    resource: options.resource,
    path,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    body: options.body ?? null,
    isBase64Encoded: options.isBase64Encoded ?? false,
    pathParameters: options.pathParameters ?? null,
    queryStringParameters: query,
    multiValueQueryStringParameters: query
      ? Object.fromEntries(Object.entries(query).map(([name, value]) => [name, [value]]))
      : null,
    stageVariables: null,
    requestContext: {
      accountId: '123456789012',
      apiId: 'unit-test',
      authorizer: null,
      protocol: 'HTTP/1.1',
      httpMethod: options.method,
      path: `/prod${path}`,
      stage: 'prod',
      requestId: options.requestId ?? crypto.randomUUID(),
      requestTimeEpoch: Date.now(),
      resourceId: 'abc123',
      resourcePath: options.resource,
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
        sourceIp: '203.0.113.7',
        user: null,
        userAgent: 'vitest',
        userArn: null,
      },
    },
  };
}

/** A Lambda context with nothing the stack should depend on. */
export function lambdaContext(): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'unit-test',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:unit-test',
    memoryLimitInMB: '256',
    awsRequestId: crypto.randomUUID(),
    logGroupName: '/aws/lambda/unit-test',
    logStreamName: 'unit-test',
    getRemainingTimeInMillis: () => 30_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
