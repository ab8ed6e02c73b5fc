import { awsCalls, type S3Operation, s3Operations } from '../../iam/aws-calls';
import type { Identity } from './identity';

/**
 * What AWS authorizes each SDK command as: the IAM action(s) and the resource ARN(s), resolved from
 * the command's input. This is the part of the local IAM that must grow with the code: a command of
 * a service not listed in `byService` fails the call (enforce.ts says so), never passes unchecked.
 */

export interface Check {
  action: string;
  /** Any of these granted is enough (SES: the address or its domain identity). */
  resources: string[];
}

export type Input = Record<string, unknown>;
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
