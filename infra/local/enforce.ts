import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { awsCalls, type S3Operation, s3Operations } from '../iam/aws-calls';
import { type Decision, evaluate, type Statement } from '../iam/policy';

/**
 * IAM, enforced locally. Loaded only by the local runtime's isolates (infra/local/isolate-main.ts),
 * never bundled: every AWS SDK client a function creates gets one more middleware, which maps the
 * command to the IAM action(s) and resource ARN(s) AWS authorizes it as and checks them against the
 * function's role from the synthesized template (infra/iam/policy.ts). A request the role does not
 * grant never reaches the emulator: the middleware answers with the HTTP response AWS sends for it
 * (status, error code, body in the service's protocol) and the client's own deserializer turns it
 * into the same exception a deployed function would get.
 */

export interface Identity {
  functionName: string;
  /** The role's logical id: `arn:aws:sts::<account>:assumed-role/<role>/<function>` in messages. */
  roleName: string;
  region: string;
  account: string;
  statements: readonly Statement[];
  /** Local queue URL → ARN (the emulator's URLs do not spell the ARN). */
  queueArns: Readonly<Record<string, string>>;
  /** Bucket name → the ARN of its SSE-KMS key: S3 uses it on the caller's behalf. */
  bucketKeys: Readonly<Record<string, string>>;
}

export interface Check {
  action: string;
  /** Any of these granted is enough (SES: the address or its domain identity). */
  resources: string[];
}

type Input = Record<string, unknown>;
const str = (value: unknown): string => (typeof value === 'string' ? value : '');

function dynamodbChecks(operation: string, input: Input, identity: Identity): Check[] {
  const table = (name: unknown, index?: unknown) =>
    `arn:aws:dynamodb:${identity.region}:${identity.account}:table/${str(name)}${index ? `/index/${str(index)}` : ''}`;
  const one = (action: string, name: unknown, index?: unknown): Check => ({
    action: `dynamodb:${action}`,
    resources: [table(name, index)],
  });
  switch (operation) {
    case 'BatchGetItem':
    case 'BatchWriteItem':
      return Object.keys((input.RequestItems as Input | undefined) ?? {}).map((name) => one(operation, name));
    case 'TransactWriteItems':
      return ((input.TransactItems as Input[] | undefined) ?? []).map((item) => {
        const [kind, body] = Object.entries(item)[0] ?? ['', {}];
        const action = kind === 'ConditionCheck' ? 'ConditionCheckItem' : `${kind}Item`;
        return one(action, (body as Input).TableName);
      });
    case 'TransactGetItems':
      return ((input.TransactItems as Input[] | undefined) ?? []).map((item) =>
        one('GetItem', (item.Get as Input | undefined)?.TableName),
      );
    default:
      return [one(operation, input.TableName, input.IndexName)];
  }
}

function sqsChecks(operation: string, input: Input, identity: Identity): Check[] {
  // The batch forms authorize as their single form (Service Authorization Reference).
  const action = operation.replace(/Batch$/, '');
  const url = str(input.QueueUrl);
  const arn =
    identity.queueArns[url] ??
    (() => {
      const [, account, name] = new URL(url).pathname.split('/');
      return `arn:aws:sqs:${identity.region}:${account}:${name}`;
    })();
  return [{ action: `sqs:${action}`, resources: [arn] }];
}

/**
 * What S3 checks itself, then what it asks KMS on the caller's behalf under an SSE-KMS bucket: from
 * the one S3 table (infra/iam/aws-calls.ts), resolved to this request's object, bucket and keys.
 */
function s3Checks(operation: string, input: Input, identity: Identity): Check[] {
  const bucket = str(input.Bucket);
  const object = `arn:aws:s3:::${bucket}/${str(input.Key)}`;
  const checks = (name: S3Operation, onBucket: string, resource: string): Check[] => {
    const entry: { action: string; bucketKeyActions?: readonly string[]; onBucket?: boolean } =
      s3Operations[name];
    const key = identity.bucketKeys[onBucket];
    return [
      { action: entry.action, resources: [entry.onBucket ? `arn:aws:s3:::${onBucket}` : resource] },
      ...(key ? (entry.bucketKeyActions ?? []).map((action) => ({ action, resources: [key] })) : []),
    ];
  };
  if (operation === 'CopyObject') {
    const source = decodeURIComponent(str(input.CopySource).replace(/^\//, '').split('?')[0] ?? '');
    const sourceBucket = source.split('/')[0] ?? '';
    return [
      ...checks('GetObject', sourceBucket, `arn:aws:s3:::${source}`),
      ...checks('PutObject', bucket, object),
    ];
  }
  if (operation in s3Operations) return checks(operation as S3Operation, bucket, object);
  return [{ action: `s3:${operation}`, resources: [object] }];
}

const keyArn = (keyId: string, identity: Identity) =>
  keyId.startsWith('arn:') ? keyId : `arn:aws:kms:${identity.region}:${identity.account}:key/${keyId}`;

/** The local key service's ciphertext names its key first (infra/local/key-service.ts). */
export function keyOfLocalCiphertext(blob: Uint8Array): string | undefined {
  const length = blob[0];
  if (!length || blob.length < 1 + length) return undefined;
  return Buffer.from(blob.subarray(1, 1 + length)).toString('utf8');
}

function kmsChecks(operation: string, input: Input, identity: Identity): Check[] {
  const named =
    str(input.KeyId) ||
    (input.CiphertextBlob instanceof Uint8Array ? (keyOfLocalCiphertext(input.CiphertextBlob) ?? '') : '');
  return [{ action: `kms:${operation}`, resources: [keyArn(named, identity)] }];
}

function sesChecks(operation: string, input: Input, identity: Identity): Check[] {
  const from = str(input.FromEmailAddress).replace(/^.*<([^>]+)>.*$/, '$1');
  const identityArn = (name: string) => `arn:aws:ses:${identity.region}:${identity.account}:identity/${name}`;
  return [
    {
      action: `ses:${operation}`,
      resources: [identityArn(from), identityArn(from.slice(from.indexOf('@') + 1))],
    },
  ];
}

function managementChecks(operation: string, input: Input, identity: Identity): Check[] {
  const method = operation === 'PostToConnection' ? 'POST' : operation === 'GetConnection' ? 'GET' : 'DELETE';
  return [
    {
      action: awsCalls[`${operation}Command`]?.actions[0] ?? 'execute-api:ManageConnections',
      resources: [
        `arn:aws:execute-api:${identity.region}:${identity.account}:local-realtime/v1/${method}/@connections/${str(input.ConnectionId)}`,
      ],
    },
  ];
}

const byService: Record<string, (operation: string, input: Input, identity: Identity) => Check[]> = {
  dynamodb: dynamodbChecks,
  sqs: sqsChecks,
  s3: s3Checks,
  kms: kmsChecks,
  sesv2: sesChecks,
  apigatewaymanagementapi: managementChecks,
  secretsmanager: (operation, input) => [
    { action: `secretsmanager:${operation}`, resources: [str(input.SecretId)] },
  ],
};

/** What AWS authorizes a command as; `undefined` for a service this check does not know. */
export function checksOf(
  service: string,
  operation: string,
  input: Input,
  identity: Identity,
): Check[] | undefined {
  return byService[service]?.(operation, input, identity);
}

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

interface MiddlewareContext {
  commandName?: string;
  clientName?: string;
}

const ENFORCED = Symbol.for('conversation-service.local-iam');

/**
 * Puts the check on every SDK client of this isolate: all of them are `@smithy/core`'s `Client`
 * (one CommonJS copy in node_modules), and the first `send` of each adds the middleware to its
 * stack (a document client shares its DynamoDB client's stack). Inside the deserialize step: a
 * denied request's answer goes through the client's own error parsing.
 */
export function enforceIam(identity: Identity): void {
  const require = createRequire(import.meta.url);
  const { Client } = require('@smithy/core/client') as {
    Client: { prototype: { send(this: Enforceable, ...args: unknown[]): unknown } };
  };
  const { HttpResponse } = require('@smithy/core/protocols') as {
    HttpResponse: new (options: {
      statusCode: number;
      headers: Record<string, string>;
      body: unknown;
    }) => unknown;
  };
  const send = Client.prototype.send;
  Client.prototype.send = function enforcedSend(this: Enforceable, ...args: unknown[]) {
    if (!this[ENFORCED]) {
      this[ENFORCED] = true;
      const service = String(this.config?.serviceId ?? '')
        .toLowerCase()
        .replace(/\s+/g, '');
      this.middlewareStack.add(
        (next: (args: unknown) => Promise<unknown>, context: MiddlewareContext) =>
          async (handlerArgs: { input: Input }) => {
            const operation = (context.commandName ?? '').replace(/Command$/, '');
            const checks = checksOf(service, operation, handlerArgs.input, identity);
            if (!checks) {
              throw new Error(
                `local IAM check: no mapping for ${service}:${operation} (infra/local/enforce.ts): add one`,
              );
            }
            const denial = firstDenial(checks, identity.statements);
            if (!denial) return next(handlerArgs);
            const answer = deniedResponse(service, denialMessage(denial, identity));
            return {
              response: new HttpResponse({
                statusCode: answer.statusCode,
                headers: answer.headers,
                body: Buffer.from(answer.body),
              }),
            };
          },
        { step: 'deserialize', priority: 'low', name: 'localIamEnforcement', override: true },
      );
    }
    return send.apply(this, args);
  };
}

interface Enforceable {
  [ENFORCED]?: boolean;
  config?: { serviceId?: string };
  middlewareStack: {
    add(middleware: unknown, options: Record<string, unknown>): void;
  };
}
