import type { NestedStack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { fallbackGroup, routeTable } from '../../functions/routes';
import { workerDefinitions } from '../../functions/workers';
import { execWrapper, nodeFlags } from '../../infra/function-tuning';
import { ROUTE_GROUP_TAG, WORKER_TAG } from '../../infra/stacks/service-stack';
import { tableDefinition } from '../../shared/db/table';
import { bucketDefinitions, queueDefinitions } from '../../shared/resources';
import { SECRET_CACHE_SECONDS } from '../../shared/secrets';
import { synthesize } from './synth';

interface CfnResource {
  Type: string;
  Properties: Record<string, unknown>;
}
interface CfnTag {
  Key: string;
  Value: string;
}

// No bundling (the template is what is under test); the method tree's nested stack read in place.
const { template, resources, stack } = synthesize();

const ofType = (type: string): [string, CfnResource][] =>
  Object.entries(resources).filter(([, resource]) => resource.Type === type);
const tagValue = (resource: CfnResource, key: string): string | undefined =>
  (resource.Properties.Tags as CfnTag[] | undefined)?.find((tag) => tag.Key === key)?.Value;
const logicalIdOfType = (type: string): string => {
  const [entry, ...others] = ofType(type);
  if (!entry || others.length > 0) throw new Error(`expected exactly one ${type}`);
  return entry[0];
};
/** `{ Ref: id }` or `{ 'Fn::GetAtt': [id, attr] }` → id. */
const referencedId = (value: unknown): string | undefined => {
  const ref = value as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
  return ref.Ref ?? ref['Fn::GetAtt']?.[0];
};

const groupFunctions = new Map(
  ofType('AWS::Lambda::Function').flatMap(([id, fn]) => {
    const group = tagValue(fn, ROUTE_GROUP_TAG);
    return group ? [[group, { id, fn }] as const] : [];
  }),
);

describe('functions', () => {
  it('gives exactly the functions that read a secret the secrets extension, its cache lifetime explicit', () => {
    const functions = ofType('AWS::Lambda::Function');
    const variables = (fn: CfnResource) =>
      (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
    const readers = functions.filter(([, fn]) =>
      Object.keys(variables(fn)).some((name) => name.endsWith('_SECRET_ARN')),
    );
    const extended = functions.filter(([, fn]) => 'PARAMETERS_SECRETS_EXTENSION_HTTP_PORT' in variables(fn));
    expect(extended.map(([id]) => id).sort()).toEqual(readers.map(([id]) => id).sort());
    expect(readers.length).toBeGreaterThanOrEqual(5);
    for (const [, fn] of readers) {
      expect(variables(fn)).toMatchObject({
        SECRETS_MANAGER_TTL: String(SECRET_CACHE_SECONDS),
        PARAMETERS_SECRETS_EXTENSION_CACHE_ENABLED: 'true',
      });
      // The layer by the region's published ARN: a mapping keyed by region, no hard-coded region.
      expect(JSON.stringify(fn.Properties.Layers)).toMatch(/Fn::FindInMap.*Paramsandsecrets.*AWS::Region/);
    }
  });

  it('has exactly one function per route group', () => {
    const groups = routeTable().map((group) => group.name);
    const tagged = ofType('AWS::Lambda::Function').filter(([, fn]) => tagValue(fn, ROUTE_GROUP_TAG));
    expect(tagged).toHaveLength(groups.length);
    expect([...groupFunctions.keys()].sort()).toEqual([...groups].sort());
  });

  it('runs every group on Node.js 22, arm64, with tracing and a one-month log group', () => {
    for (const [group, { fn }] of groupFunctions) {
      expect(fn.Properties).toMatchObject({
        Handler: 'index.handler',
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        MemorySize: 512,
        // A streaming group's answer outlasts API Gateway's 29 s (which bounds its first byte only).
        Timeout: group === 'exports' ? 600 : 29,
        TracingConfig: { Mode: 'Active' },
      });
      const logGroupId = referencedId((fn.Properties.LoggingConfig as { LogGroup: unknown }).LogGroup);
      expect(logGroupId && resources[logGroupId]?.Properties.RetentionInDays).toBe(30);
      const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(Object.keys(variables)).toEqual(
        expect.arrayContaining(['TABLE_NAME', 'PLATFORM_ADMIN_TOKEN_SHA256']),
      );
      expect(variables).not.toHaveProperty('NODE_OPTIONS');
      // The key itself is read at cold start, never resolved into the environment.
      expect(variables).not.toHaveProperty('CURSOR_SIGNING_KEY');
      if (variables.CURSOR_SIGNING_KEY_SECRET_ARN !== undefined) {
        expect(resources[referencedId(variables.CURSOR_SIGNING_KEY_SECRET_ARN) ?? '']?.Type).toBe(
          'AWS::SecretsManager::Secret',
        );
      }
    }
  });

  it('starts the exports function through the exec wrapper with its node flags, and no other', () => {
    const wrapped = new Map<string, unknown>();
    for (const [, fn] of ofType('AWS::Lambda::Function')) {
      const variables = (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)
        ?.Variables;
      const name = tagValue(fn, ROUTE_GROUP_TAG) ?? tagValue(fn, WORKER_TAG) ?? 'other';
      if (variables?.AWS_LAMBDA_EXEC_WRAPPER !== undefined) {
        expect(variables.AWS_LAMBDA_EXEC_WRAPPER, name).toBe('/var/task/node-flags.sh');
        wrapped.set(name, variables[execWrapper.flagsVar]);
      }
    }
    expect(Object.fromEntries(wrapped)).toEqual({ exports: '--max-semi-space-size=1' });
    expect(Object.keys(nodeFlags)).toEqual(['exports']);
  });

  it('has one function per worker, triggered by its source', () => {
    const workers = ofType('AWS::Lambda::Function').filter(([, fn]) => tagValue(fn, WORKER_TAG));
    expect(workers.map(([, fn]) => tagValue(fn, WORKER_TAG)).sort()).toEqual(
      workerDefinitions.map((worker) => worker.name).sort(),
    );
    const mappings = ofType('AWS::Lambda::EventSourceMapping').map(([, mapping]) => mapping.Properties);
    for (const [id] of workers) {
      expect(mappings.filter((mapping) => referencedId(mapping.FunctionName) === id)).toHaveLength(1);
    }
  });

  it('grants API Gateway one invoke permission per function, not one per method', () => {
    for (const { id } of groupFunctions.values()) {
      const permissions = ofType('AWS::Lambda::Permission').filter(
        ([, permission]) => referencedId(permission.Properties.FunctionName) === id,
      );
      // The fallback function also answers the root's methods, which stay in the main stack: one
      // permission in each of the two stacks that hold its methods.
      expect(permissions.length, id).toBeLessThanOrEqual(
        id === groupFunctions.get(fallbackGroup)?.id ? 2 : 1,
      );
    }
  });
});

describe('REST API', () => {
  const apiId = logicalIdOfType('AWS::ApiGateway::RestApi');
  const pathOf = (resourceId: unknown): string => {
    const id = referencedId(resourceId);
    if (id === apiId) return '';
    const resource = id ? resources[id] : undefined;
    if (resource?.Type !== 'AWS::ApiGateway::Resource') throw new Error(`not a resource: ${String(id)}`);
    return `${pathOf(resource.Properties.ParentId)}/${String(resource.Properties.PathPart)}`;
  };
  const methods = ofType('AWS::ApiGateway::Method').map(([, method]) => ({
    key: `${String(method.Properties.HttpMethod)} ${pathOf(method.Properties.ResourceId) || '/'}`,
    // The integration URI joins the partition, region and `{ 'Fn::GetAtt': [functionId, 'Arn'] }`.
    target: (
      method.Properties.Integration as { Uri: { 'Fn::Join': [string, { 'Fn::GetAtt'?: [string] }[]] } }
    ).Uri['Fn::Join'][1].find((part) => part['Fn::GetAtt'])?.['Fn::GetAtt']?.[0],
  }));
  const targetOf = (key: string) => methods.find((method) => method.key === key)?.target;
  const fallbackId = groupFunctions.get(fallbackGroup)?.id;

  it('serves every route of the route table from its group function', () => {
    const routes = routeTable().flatMap((group) =>
      group.routes.map((route) => ({ group: group.name, route })),
    );
    expect(routes.length).toBeGreaterThan(0);
    for (const { group, route } of routes) {
      const key = `${route.method} ${route.path}`;
      expect(targetOf(key), key).toBe(groupFunctions.get(group)?.id);
    }
    expect(new Set(methods.map((method) => method.key)).size).toBe(methods.length);
  });

  it('streams the exports group’s answers (REST response streaming), and only its', () => {
    const exportsId = groupFunctions.get('exports')?.id;
    for (const [, method] of ofType('AWS::ApiGateway::Method')) {
      const integration = method.Properties.Integration as { Uri: unknown; ResponseTransferMode?: string };
      const streams = JSON.stringify(integration.Uri).includes(`"${exportsId}"`);
      expect(integration.ResponseTransferMode ?? 'BUFFERED').toBe(streams ? 'STREAM' : 'BUFFERED');
    }
  });

  it('sends other methods on known paths and unknown paths to the fallback function', () => {
    expect(fallbackId).toBeDefined();
    for (const route of routeTable().flatMap((group) => group.routes)) {
      expect(targetOf(`ANY ${route.path}`), route.path).toBe(fallbackId);
    }
    for (const key of ['ANY /{proxy+}', 'ANY /api/{proxy+}', 'ANY /', 'ANY /api']) {
      expect(targetOf(key), key).toBe(fallbackId);
    }
  });

  it('answers its own errors in the contract envelope', () => {
    const responses = ofType('AWS::ApiGateway::GatewayResponse').map(([, response]) => response.Properties);
    expect(responses.map((response) => response.ResponseType)).toEqual(
      expect.arrayContaining(['DEFAULT_4XX', 'DEFAULT_5XX']),
    );
    for (const response of responses) {
      const body = (response.ResponseTemplates as Record<string, string>)['application/json'] ?? '';
      expect(body).toMatch(
        /^\{"error":\{"code":"[A-Z_]+","message":\$context\.error\.messageString,"correlationId":"\$context\.requestId"\}\}$/,
      );
    }
  });

  it('deploys stage v1 with tracing, metrics and access logs', () => {
    const stages = ofType('AWS::ApiGateway::Stage').map(([, stage]) => stage.Properties);
    expect(stages).toHaveLength(1);
    expect(stages[0]).toMatchObject({
      StageName: 'v1',
      TracingEnabled: true,
      AccessLogSetting: { DestinationArn: expect.anything() },
      MethodSettings: [expect.objectContaining({ MetricsEnabled: true })],
    });
  });
});

describe('data', () => {
  const tableId = logicalIdOfType('AWS::DynamoDB::GlobalTable');

  it('builds the table from the shared table definition', () => {
    const table = resources[tableId]?.Properties ?? {};
    expect(table).toMatchObject({
      KeySchema: [
        { AttributeName: tableDefinition.partitionKey, KeyType: 'HASH' },
        { AttributeName: tableDefinition.sortKey, KeyType: 'RANGE' },
      ],
      TimeToLiveSpecification: { AttributeName: tableDefinition.timeToLiveAttribute, Enabled: true },
      StreamSpecification: { StreamViewType: tableDefinition.streamView },
      BillingMode: 'PAY_PER_REQUEST',
      SSESpecification: { SSEEnabled: true, SSEType: 'KMS' },
      Replicas: [
        {
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          DeletionProtectionEnabled: true,
        },
      ],
    });
    const indexes = (table.GlobalSecondaryIndexes as { IndexName: string }[]).map((index) => index.IndexName);
    expect(indexes).toEqual(tableDefinition.globalIndexes.map((index) => index.name));
    expect(resources[tableId]).toMatchObject({ DeletionPolicy: 'Retain' });
  });

  it('runs the search index refusing connections without TLS, without JIT, as locally', () => {
    // The network and database are a nested stack of their own (infra/stacks/parts/storage.ts).
    const search = Template.fromStack(stack.node.findChild('Search') as NestedStack);
    const groups = search.findResources('AWS::RDS::DBClusterParameterGroup');
    expect(Object.values(groups).map((group) => group.Properties.Parameters)).toEqual([
      { 'rds.force_ssl': '1', jit: '0' },
    ]);
    const clusters = Object.values(search.findResources('AWS::RDS::DBCluster'));
    expect(clusters.map((cluster) => cluster.Properties.DBClusterParameterGroupName)).toEqual([
      { Ref: Object.keys(groups)[0] },
    ]);
  });

  it('never grants a wildcard action on the table', () => {
    const statements = ofType('AWS::IAM::Policy')
      .flatMap(([, policy]) => (policy.Properties.PolicyDocument as { Statement: unknown[] }).Statement)
      .map((statement) => statement as { Action: string | string[]; Resource: unknown })
      .filter((statement) => JSON.stringify(statement.Resource).includes(`"${tableId}"`));
    const itemReaders = statements.filter((statement) =>
      [statement.Action].flat().includes('dynamodb:GetItem'),
    );
    expect(itemReaders.length).toBeGreaterThanOrEqual(groupFunctions.size);
    for (const action of statements.flatMap((statement) => [statement.Action].flat())) {
      expect(action).toMatch(/^dynamodb:[A-Za-z]+$/);
    }
  });

  it('gives every queue a dead-letter queue with its redrive count, encrypted and TLS-only', () => {
    const queues = ofType('AWS::SQS::Queue');
    for (const definition of queueDefinitions) {
      const queue = queues.find(([, q]) => tagValue(q, 'service:queue') === definition.name)?.[1];
      const redrive = queue?.Properties.RedrivePolicy as {
        deadLetterTargetArn: unknown;
        maxReceiveCount: number;
      };
      expect(redrive?.maxReceiveCount, definition.name).toBe(definition.maxReceiveCount);
      const deadLetterId = referencedId(redrive.deadLetterTargetArn);
      expect(deadLetterId && resources[deadLetterId]?.Type).toBe('AWS::SQS::Queue');
      expect(queue?.Properties.VisibilityTimeout).toBe(definition.visibilityTimeoutSeconds);
    }
    for (const [id, queue] of queues) {
      expect(queue.Properties.SqsManagedSseEnabled, id).toBe(true);
    }
    expect(ofType('AWS::SQS::QueuePolicy')).toHaveLength(queues.length);
  });

  it('keeps every bucket private, encrypted, logged and expiring', () => {
    const all = ofType('AWS::S3::Bucket');
    // The service's buckets, and the one their access logs go to.
    const [logs, ...others] = all.filter(([id]) => id.startsWith('AccessLogsBucket'));
    expect(logs && others.length === 0).toBe(true);
    const buckets = all.filter(([id]) => id !== logs?.[0]);
    expect(buckets).toHaveLength(bucketDefinitions.length);
    for (const [id, bucket] of all) {
      expect(bucket.Properties.PublicAccessBlockConfiguration, id).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      expect(resources[id]).toMatchObject({ DeletionPolicy: 'Retain' });
    }
    for (const [id, bucket] of buckets) {
      // A customer key (attachments: SSE-S3, see infra/constructs/uploads-bucket.ts); versioning
      // off on purpose (see service-stack.ts); access logs kept.
      const encryption = JSON.stringify(bucket.Properties.BucketEncryption);
      if (id.startsWith('UploadsBucket')) expect(encryption, id).toContain('AES256');
      else {
        expect(encryption, id).toContain('aws:kms');
        expect(encryption, id).toContain('"BucketKeyEnabled":true');
      }
      expect(bucket.Properties.VersioningConfiguration, id).toBeUndefined();
      const logging = bucket.Properties.LoggingConfiguration as { DestinationBucketName: unknown };
      expect(referencedId(logging.DestinationBucketName), id).toBe(logs?.[0]);
    }
    // A log target cannot use SSE-KMS.
    expect(JSON.stringify(logs?.[1].Properties.BucketEncryption)).toContain('AES256');
    const expirations = buckets.flatMap(([, bucket]) =>
      (bucket.Properties.LifecycleConfiguration as { Rules: { ExpirationInDays?: number }[] }).Rules.map(
        (rule) => rule.ExpirationInDays,
      ),
    );
    expect(expirations.sort()).toEqual(
      bucketDefinitions.map((definition) => definition.expireAfterDays).sort(),
    );
  });
});

describe('operations', () => {
  it('takes the admin token hash as a NoEcho parameter and outputs the API URL and table name', () => {
    template.hasParameter('PlatformAdminTokenSha256', { NoEcho: true, AllowedPattern: '^[0-9a-fA-F]{64}$' });
    template.hasOutput('ApiUrl', {});
    template.hasOutput('TableName', {});
    template.hasOutput('RealtimeUrl', {});
  });
});

describe('realtime channel', () => {
  it('routes $connect, $disconnect and $default to one connection handler, and lets the push worker post to connections', () => {
    const routeKeys = ofType('AWS::ApiGatewayV2::Route').map(([, route]) =>
      String(route.Properties.RouteKey),
    );
    expect(routeKeys.sort()).toEqual(['$connect', '$default', '$disconnect']);
    const pushWorker = ofType('AWS::Lambda::Function').find(
      ([, fn]) => tagValue(fn, WORKER_TAG) === 'stream-router',
    );
    expect(pushWorker).toBeDefined();
    const environment = pushWorker?.[1].Properties.Environment as
      | { Variables: Record<string, unknown> }
      | undefined;
    expect(environment?.Variables.REALTIME_ENDPOINT).toBeDefined();
    const grantsManage = ofType('AWS::IAM::Policy').some(([, policy]) =>
      JSON.stringify(policy.Properties.PolicyDocument).includes('execute-api:ManageConnections'),
    );
    expect(grantsManage).toBe(true);
  });

  it('encrypts webhook secrets with a rotating KMS key: only the webhooks API encrypts, only the delivery worker decrypts', () => {
    const [keyId = ''] = ofType('AWS::KMS::Key').find(([id]) => id.startsWith('WebhookSecretsKey')) ?? [];
    expect(resources[keyId]?.Properties.EnableKeyRotation).toBe(true);
    const kmsActionsOf = (functionId: string): string[] => {
      const fn = resources[functionId];
      const roleId = referencedId(fn?.Properties.Role);
      return ofType('AWS::IAM::Policy')
        .filter(([, policy]) =>
          (policy.Properties.Roles as unknown[]).some((role) => referencedId(role) === roleId),
        )
        .flatMap(
          ([, policy]) =>
            (
              policy.Properties.PolicyDocument as {
                Statement: { Action: string | string[]; Resource: unknown }[];
              }
            ).Statement,
        )
        .filter((statement) => referencedId(statement.Resource) === keyId)
        .flatMap((statement) => [statement.Action].flat());
    };
    const holders = ofType('AWS::Lambda::Function').filter(([, fn]) => {
      const variables = (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)
        ?.Variables;
      return variables?.WEBHOOK_SECRETS_KMS_KEY_ID !== undefined;
    });
    const names = holders.map(([, fn]) => tagValue(fn, ROUTE_GROUP_TAG) ?? tagValue(fn, WORKER_TAG)).sort();
    expect(names).toEqual(['webhook-delivery', 'webhooks']);
    const webhooksFunction = groupFunctions.get('webhooks')?.id ?? '';
    const deliveryWorker =
      holders.find(([, fn]) => tagValue(fn, WORKER_TAG) === 'webhook-delivery')?.[0] ?? '';
    expect(kmsActionsOf(webhooksFunction)).toContain('kms:Encrypt');
    expect(kmsActionsOf(webhooksFunction)).not.toContain('kms:Decrypt');
    expect(kmsActionsOf(deliveryWorker)).toContain('kms:Decrypt');
    expect(kmsActionsOf(deliveryWorker)).not.toContain('kms:Encrypt');
    // No key material in the template: the local-key variable is not set in AWS at all.
    expect(JSON.stringify(template.toJSON())).not.toContain('WEBHOOK_SECRETS_KEY"');
  });
});
