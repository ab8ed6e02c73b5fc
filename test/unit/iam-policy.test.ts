import { describe, expect, it } from 'vitest';
import { evaluate, type Statement, statementsOf, wildcardMatch } from '../../infra/iam/policy';
import { checksOf } from '../../infra/local/iam/checks';
import { deniedResponse, firstDenial } from '../../infra/local/iam/denial';
import type { Identity } from '../../infra/local/iam/identity';

/** AWS's documented evaluation rules (IAM User Guide, "Policy evaluation logic"), one account, identity policies. */
const allow = (actions: string[], resources: string[], extra: Partial<Statement> = {}): Statement => ({
  effect: 'Allow',
  actions,
  resources,
  unsupported: false,
  policy: 'test',
  ...extra,
});
const table = 'arn:aws:dynamodb:us-east-1:000000000000:table/t';

describe('policy evaluation', () => {
  it('denies by default (implicit deny)', () => {
    expect(evaluate([], 'dynamodb:GetItem', table)).toBe('implicit-deny');
  });
  it('grants an action on a resource an Allow names', () => {
    expect(evaluate([allow(['dynamodb:GetItem'], [table])], 'dynamodb:GetItem', table)).toBe('allowed');
  });
  it('does not grant another action, or the table to an index', () => {
    const statements = [allow(['dynamodb:GetItem', 'dynamodb:Query'], [table])];
    expect(evaluate(statements, 'dynamodb:BatchWriteItem', table)).toBe('implicit-deny');
    expect(evaluate(statements, 'dynamodb:Query', `${table}/index/gsi1`)).toBe('implicit-deny');
  });
  it('lets an explicit Deny win over any Allow', () => {
    const statements = [
      allow(['dynamodb:*'], ['*']),
      { ...allow(['dynamodb:DeleteItem'], [table]), effect: 'Deny' as const },
    ];
    expect(evaluate(statements, 'dynamodb:DeleteItem', table)).toBe('explicit-deny');
    expect(evaluate(statements, 'dynamodb:PutItem', table)).toBe('allowed');
  });
  it('matches wildcards: * any run (/ and : included), ? one character, actions case-insensitively', () => {
    expect(wildcardMatch('kms:GenerateDataKey*', 'kms:GenerateDataKeyWithoutPlaintext', true)).toBe(true);
    expect(wildcardMatch('DynamoDB:getitem', 'dynamodb:GetItem', true)).toBe(true);
    expect(wildcardMatch('arn:aws:s3:::b/*', 'arn:aws:s3:::b/a/b/c.pdf')).toBe(true);
    expect(wildcardMatch('arn:aws:s3:::b/*', 'arn:aws:s3:::other/x')).toBe(false);
    expect(wildcardMatch('arn:aws:s3:::b?', 'arn:aws:s3:::bx')).toBe(true);
    expect(wildcardMatch('arn:aws:s3:::b?', 'arn:aws:s3:::bxy')).toBe(false);
    expect(wildcardMatch('arn:aws:s3:::B/*', 'arn:aws:s3:::b/x')).toBe(false);
  });
  it('never grants through a statement with a Condition, NotAction or NotResource', () => {
    const [statement] = statementsOf(
      { Statement: [{ Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: table, Condition: {} }] },
      'p',
      String,
    );
    expect(statement?.unsupported).toBe(true);
    expect(evaluate(statement ? [statement] : [], 'dynamodb:GetItem', table)).toBe('implicit-deny');
  });
});

const identity: Identity = {
  functionName: 'webhook-delivery',
  roleName: 'WebhookDeliveryWorkerRole',
  region: 'us-east-1',
  account: '000000000000',
  statements: [allow(['dynamodb:GetItem'], [table]), allow(['s3:PutObject'], ['arn:aws:s3:::b/*'])],
  queueArns: {},
  bucketKeys: { b: 'arn:aws:kms:us-east-1:000000000000:key/k' },
};

describe('what a command is authorized as', () => {
  it('a transaction item by item, a batch write per table', () => {
    const checks = checksOf(
      'dynamodb',
      'TransactWriteItems',
      { TransactItems: [{ Put: { TableName: 't' } }, { ConditionCheck: { TableName: 't' } }] },
      identity,
    );
    expect(checks?.map((check) => check.action)).toEqual(['dynamodb:PutItem', 'dynamodb:ConditionCheckItem']);
    const batch = checksOf('dynamodb', 'BatchWriteItem', { RequestItems: { t: [] } }, identity) ?? [];
    expect(firstDenial(batch, identity.statements)).toMatchObject({
      action: 'dynamodb:BatchWriteItem',
      resource: table,
    });
  });
  it('a query on an index as the index ARN', () => {
    expect(
      checksOf('dynamodb', 'Query', { TableName: 't', IndexName: 'gsi2' }, identity)?.[0]?.resources,
    ).toEqual([`${table}/index/gsi2`]);
  });
  it('an upload under an SSE-KMS bucket as PutObject plus the key use S3 makes for the caller', () => {
    const checks = checksOf('s3', 'PutObject', { Bucket: 'b', Key: 'x.pdf' }, identity) ?? [];
    expect(firstDenial(checks, identity.statements)).toMatchObject({
      action: 'kms:GenerateDataKey',
      resource: 'arn:aws:kms:us-east-1:000000000000:key/k',
    });
  });
  it("answers as each service's protocol does", () => {
    expect(deniedResponse('dynamodb', 'm')).toMatchObject({ statusCode: 400 });
    expect(JSON.parse(deniedResponse('dynamodb', 'm').body).__type).toMatch(/#AccessDeniedException$/);
    expect(deniedResponse('s3', 'm')).toMatchObject({ statusCode: 403 });
    expect(deniedResponse('s3', 'm').body).toContain('<Code>AccessDenied</Code>');
    expect(deniedResponse('sqs', 'm').headers['x-amzn-query-error']).toBe('AccessDenied;Sender');
    expect(JSON.parse(deniedResponse('kms', 'm').body).__type).toBe('AccessDeniedException');
  });
});
