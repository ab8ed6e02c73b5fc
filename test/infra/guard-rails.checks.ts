import { describe, expect, it } from 'vitest';
import { workerDefinitions } from '../../functions/workers';
import { defaultReservedConcurrency } from '../../infra/stacks/service-stack';
import { tableDefinition } from '../../shared/db/table';
import { type CfnResource, referencedId, synthesize, tagValue } from './synth';

const { json, resources, ofType } = synthesize();

/** Our functions by name (route group, worker, `realtime`). */
const functionsByName = (list: [string, CfnResource][]) =>
  new Map(
    list.flatMap(([id, fn]) => {
      const name =
        tagValue(fn, 'service:route-group') ??
        tagValue(fn, 'service:worker') ??
        (tagValue(fn, 'service:realtime') ? 'realtime' : undefined);
      return name ? [[name, { id, fn }] as const] : [];
    }),
  );
const functions = functionsByName(ofType('AWS::Lambda::Function'));

describe('the public edge', () => {
  it('throttles the REST stage below the account limit', () => {
    const [, stage] = ofType('AWS::ApiGateway::Stage')[0] ?? [];
    expect(stage?.Properties.MethodSettings).toEqual([
      expect.objectContaining({
        HttpMethod: '*',
        ResourcePath: '/*',
        ThrottlingRateLimit: 1000,
        ThrottlingBurstLimit: 2000,
        MetricsEnabled: true,
      }),
    ]);
  });

  it('throttles the WebSocket stage and keeps its access log, encrypted', () => {
    const [, stage] = ofType('AWS::ApiGatewayV2::Stage')[0] ?? [];
    expect(stage?.Properties.DefaultRouteSettings).toMatchObject({
      ThrottlingRateLimit: 500,
      ThrottlingBurstLimit: 1000,
    });
    const settings = stage?.Properties.AccessLogSettings as { DestinationArn: unknown; Format: string };
    const logGroupId = referencedId(settings.DestinationArn);
    expect(logGroupId && resources[logGroupId]?.Type).toBe('AWS::Logs::LogGroup');
    expect(JSON.parse(settings.Format)).toMatchObject({
      requestId: '$context.requestId',
      connectionId: '$context.connectionId',
      routeKey: '$context.routeKey',
      status: '$context.status',
    });
  });

  it('can put a WAF web ACL with a per-IP rate-based rule in front of the REST stage (EnableWaf)', () => {
    expect(json.Parameters.EnableWaf).toMatchObject({ Default: 'false', AllowedValues: ['true', 'false'] });
    expect(json.Parameters.WafRequestsPer5MinutesPerIp).toMatchObject({ Type: 'Number' });
    const [[aclId, acl] = ['', undefined]] = ofType('AWS::WAFv2::WebACL');
    const [[, association] = ['', undefined]] = ofType('AWS::WAFv2::WebACLAssociation');
    expect(acl?.Condition).toBeDefined();
    expect(association?.Condition).toBe(acl?.Condition);
    expect(json.Conditions[acl?.Condition ?? '']).toEqual({ 'Fn::Equals': [{ Ref: 'EnableWaf' }, 'true'] });
    expect(acl?.Properties).toMatchObject({
      Scope: 'REGIONAL',
      DefaultAction: { Allow: {} },
      Rules: [
        {
          Name: 'RateLimitPerIp',
          Action: { Block: { CustomResponse: { ResponseCode: 429 } } },
          Statement: {
            RateBasedStatement: { Limit: { Ref: 'WafRequestsPer5MinutesPerIp' }, AggregateKeyType: 'IP' },
          },
        },
      ],
    });
    expect(referencedId(association?.Properties.WebACLArn)).toBe(aclId);
    const stageId = ofType('AWS::ApiGateway::Stage')[0]?.[0];
    const restApiId = ofType('AWS::ApiGateway::RestApi')[0]?.[0];
    const arn = JSON.stringify(association?.Properties.ResourceArn);
    expect(arn).toContain(`"Ref":"${restApiId}"`);
    expect(arn).toContain(`"/stages/",{"Ref":"${stageId}"}`);
  });
});

describe('functions', () => {
  it('reserves concurrency for every function, within an account of 1000', () => {
    expect(functions.size).toBeGreaterThan(0);
    let total = 0;
    for (const [name, { fn }] of functions) {
      const reserved = fn.Properties.ReservedConcurrentExecutions as number;
      expect(reserved, name).toBe(defaultReservedConcurrency[name] ?? 20);
      total += reserved;
    }
    // AWS keeps 100 unreserved; leave room for growth as well.
    expect(total).toBeLessThanOrEqual(600);
  });

  it('never lets a queue event source run more batches than its function may', () => {
    const small = synthesize({ reservedConcurrency: { 'webhook-delivery': 4 } });
    const worker = functionsByName(small.ofType('AWS::Lambda::Function')).get('webhook-delivery');
    expect(worker?.fn.Properties.ReservedConcurrentExecutions).toBe(4);
    const mapping = small
      .ofType('AWS::Lambda::EventSourceMapping')
      .find(([, m]) => referencedId(m.Properties.FunctionName) === worker?.id)?.[1];
    expect(mapping?.Properties.ScalingConfig).toEqual({ MaximumConcurrency: 4 });
    for (const definition of workerDefinitions) {
      if (definition.source.kind !== 'queue') continue;
      const { id, fn } = functions.get(definition.name) ?? {};
      const own = ofType('AWS::Lambda::EventSourceMapping').find(
        ([, m]) => referencedId(m.Properties.FunctionName) === id,
      )?.[1];
      expect(
        (own?.Properties.ScalingConfig as { MaximumConcurrency?: number } | undefined)?.MaximumConcurrency,
      ).toBeLessThanOrEqual(fn?.Properties.ReservedConcurrentExecutions as number);
    }
  });

  it('reserves nothing for an account that cannot (reservedConcurrency: false)', () => {
    const none = synthesize({ reservedConcurrency: false });
    for (const [id, fn] of none.ofType('AWS::Lambda::Function')) {
      expect(fn.Properties.ReservedConcurrentExecutions, id).toBeUndefined();
    }
  });

  it('grants Resource "*" only where AWS takes no resource (X-Ray, GetRandomPassword)', () => {
    const statements = ofType('AWS::IAM::Policy').flatMap(
      ([, policy]) =>
        (
          policy.Properties.PolicyDocument as {
            Statement: { Action: string | string[]; Resource: unknown }[];
          }
        ).Statement,
    );
    const unscoped = statements
      .filter((statement) => [statement.Resource].flat().includes('*'))
      .flatMap((statement) => [statement.Action].flat());
    expect(unscoped.length).toBeGreaterThan(0);
    expect([...new Set(unscoped)].sort()).toEqual([
      'secretsmanager:GetRandomPassword',
      'xray:PutTelemetryRecords',
      'xray:PutTraceSegments',
    ]);
  });

  it('grants the table and each index by name, never index/*', () => {
    const statements = ofType('AWS::IAM::Policy').flatMap(
      ([, policy]) => (policy.Properties.PolicyDocument as { Statement: { Resource: unknown }[] }).Statement,
    );
    const text = JSON.stringify(statements);
    expect(text).not.toContain('/index/*');
    for (const index of tableDefinition.globalIndexes) expect(text).toContain(`/index/${index.name}"`);
  });
});

describe('encryption at rest', () => {
  it('encrypts every log group with the logs key, which CloudWatch Logs may use for this account only', () => {
    const logGroups = ofType('AWS::Logs::LogGroup');
    expect(logGroups.length).toBeGreaterThanOrEqual(functions.size + 2);
    for (const [id, group] of logGroups) {
      expect(referencedId(group.Properties.KmsKeyId), id).toMatch(/^LogsKey/);
      expect(group.Properties.RetentionInDays, id).toBe(30);
    }
    const [, key] = ofType('AWS::KMS::Key').find(([id]) => id.startsWith('LogsKey')) ?? [];
    expect(key?.Properties.EnableKeyRotation).toBe(true);
    const policy = JSON.stringify(key?.Properties.KeyPolicy);
    expect(policy).toContain('kms:EncryptionContext:aws:logs:arn');
    expect(policy).toMatch(/logs\.","?\{?"?Ref"?:"AWS::Region"/);
  });

  it('rotates every customer key', () => {
    for (const [id, key] of ofType('AWS::KMS::Key')) {
      expect(key.Properties.EnableKeyRotation, id).toBe(true);
      expect(key.DeletionPolicy, id).toBe('Retain');
    }
  });
});

describe('the cursor signing key', () => {
  const [[secretId] = ['']] = ofType('AWS::SecretsManager::Secret').filter(([id]) =>
    id.startsWith('CursorSigningKey'),
  );

  it('is never resolved into a template or an environment', () => {
    expect(JSON.stringify(json)).not.toContain('{{resolve:secretsmanager');
  });

  it('is readable by every function that gets its ARN, and by nothing else', () => {
    const readers = ofType('AWS::IAM::Policy').filter(([, policy]) =>
      (
        policy.Properties.PolicyDocument as { Statement: { Action: unknown; Resource: unknown }[] }
      ).Statement.some(
        (statement) =>
          [statement.Action].flat().includes('secretsmanager:GetSecretValue') &&
          referencedId(statement.Resource) === secretId,
      ),
    );
    const withArn = ofType('AWS::Lambda::Function').filter(
      ([, fn]) =>
        referencedId(
          (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables
            ?.CURSOR_SIGNING_KEY_SECRET_ARN,
        ) === secretId,
    );
    // Only the groups that answer cursor pages (test/infra/iam-needs.checks.ts: those whose bundle reads it).
    expect(withArn.map(([, fn]) => tagValue(fn, 'service:route-group')).sort()).toEqual([
      'audit',
      'conversations',
      'events',
      'search',
      'visitors',
    ]);
    // One policy per function role, plus the rotation function's.
    expect(readers.length).toBe(withArn.length + 1);
  });

  it('rotates every 30 days through its own rotation function', () => {
    const [[, schedule] = ['', undefined]] = ofType('AWS::SecretsManager::RotationSchedule');
    expect(referencedId(schedule?.Properties.SecretId)).toBe(secretId);
    expect(schedule?.Properties.RotationRules).toEqual({ ScheduleExpression: 'rate(30 days)' });
    const rotationId = referencedId(schedule?.Properties.RotationLambdaARN);
    const rotation = resources[rotationId ?? ''];
    expect(rotation && tagValue(rotation, 'service:rotation')).toBe('cursor-signing-key');
    expect(rotation?.Properties.ReservedConcurrentExecutions).toBe(1);
  });
});

/** The functions whose role may take `action` on the resource `resourceId`. */
function grantedTo(action: string, resourceId: string): string[] {
  const roles = ofType('AWS::IAM::Policy')
    .filter(([, policy]) =>
      (
        policy.Properties.PolicyDocument as { Statement: { Action: unknown; Resource: unknown }[] }
      ).Statement.some(
        (statement) =>
          [statement.Action].flat().includes(action) &&
          [statement.Resource].flat().some((resource) => referencedId(resource) === resourceId),
      ),
    )
    .flatMap(([, policy]) => (policy.Properties.Roles as unknown[]).map((role) => referencedId(role)));
  return [...functions]
    .filter(([, { fn }]) => roles.includes(referencedId(fn.Properties.Role)))
    .map(([name]) => name)
    .sort();
}

describe('the Discord bot token', () => {
  const [[secretId] = ['']] = ofType('AWS::SecretsManager::Secret').filter(([id]) =>
    id.startsWith('DiscordBotToken'),
  );

  it('is read only by the functions that call Discord, which get its ARN and never its value', () => {
    expect(secretId).not.toBe('');
    expect(grantedTo('secretsmanager:GetSecretValue', secretId)).toEqual(['discord', 'discord-delivery']);
    for (const name of ['discord', 'discord-delivery']) {
      const environment = functions.get(name)?.fn.Properties.Environment as
        | { Variables: Record<string, unknown> }
        | undefined;
      const variables = environment?.Variables ?? {};
      expect(referencedId(variables.DISCORD_BOT_TOKEN_SECRET_ARN), name).toBe(secretId);
      expect(variables, name).not.toHaveProperty('DISCORD_BOT_TOKEN');
    }
  });
});

describe('the AI provider keys', () => {
  it('are sealed and opened under their own rotating key, by the admin function only', () => {
    const [[keyId, key] = ['', undefined]] = ofType('AWS::KMS::Key').filter(([id]) =>
      id.startsWith('AiProviderKeysKey'),
    );
    expect(key?.Properties.EnableKeyRotation).toBe(true);
    expect(grantedTo('kms:Decrypt', keyId)).toEqual(['admin']);
    expect(grantedTo('kms:Encrypt', keyId)).toEqual(['admin']);
    const environment = functions.get('admin')?.fn.Properties.Environment as
      | { Variables: Record<string, unknown> }
      | undefined;
    const variables = environment?.Variables ?? {};
    expect(referencedId(variables.AI_PROVIDER_KEYS_KMS_KEY_ID)).toBe(keyId);
  });
});
