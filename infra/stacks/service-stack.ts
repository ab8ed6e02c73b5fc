import { join } from 'node:path';
import {
  CfnCondition,
  type CfnElement,
  CfnOutput,
  CfnParameter,
  Duration,
  Fn,
  NestedStack,
  RemovalPolicy,
  Stack,
  type StackProps,
  Tags,
  Token,
} from 'aws-cdk-lib';
import {
  AccessLogFormat,
  type IResource,
  LambdaIntegration,
  LogGroupLogDestination,
  type Method,
  MethodLoggingLevel,
  Resource,
  ResponseTransferMode,
  ResponseType,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import {
  WebSocketApi,
  LogGroupLogDestination as WebSocketLogDestination,
  WebSocketStage,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { WebSocketLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { MathExpression, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import {
  AttributeType,
  Billing,
  ProjectionType,
  StreamViewType,
  TableEncryptionV2,
  TableV2,
} from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { fallbackGroup, groupEntry, type RouteGroup, routeTable } from '../../functions/routes';
import {
  realtimeConnectionsEntry,
  type WorkerDefinition,
  workerDefinitions,
  workerEntry,
} from '../../functions/workers';
import packageJson from '../../package.json' with { type: 'json' };
import { tableDefinition } from '../../shared/db/table';
import { ROUTE_CATALOG_FILE } from '../../shared/http/route-catalog';
import {
  METRICS_NAMESPACE,
  METRICS_SERVICE,
  SEARCH_METRICS,
  WEBHOOK_DELIVERIES,
} from '../../shared/metrics-contract';
import { bucketDefinitions, deadLetterName, queueDefinitions } from '../../shared/resources';
import { alarmPeriod, type PagingAlarm, ServiceAlarms } from '../constructs/alarms';
import { type DashboardQueue, ServiceDashboard } from '../constructs/dashboard';
import { LogQueries } from '../constructs/log-queries';
import { SearchIndex } from '../constructs/search-index';
import {
  projectRoot,
  type SecretRead,
  ServiceFunction,
  type ServiceFunctionProps,
} from '../constructs/service-function';
import { UploadsBucket } from '../constructs/uploads-bucket';
import { RateLimitedWebAcl } from '../constructs/web-acl';
import { acknowledge, reasons } from '../nag';
import { thresholds } from '../operations/thresholds';
import { writeRouteCatalog } from '../route-catalog-file';
import { RouteAlarms, type RoutedMethod } from './route-alarms';

type QueueName = (typeof queueDefinitions)[number]['name'];
type BucketName = (typeof bucketDefinitions)[number]['name'];

/** Tags on our functions, so tests and operators can tell them apart and from CDK helper functions. */
export const ROUTE_GROUP_TAG = 'service:route-group';
export const WORKER_TAG = 'service:worker';

/** The custom rotation function of the cursor key ring (Secrets Manager's rotation steps). */
export const cursorKeyRotationEntry = 'functions/rotation/cursor-signing-key.ts';

/**
 * How a route group's function is built beyond the construct's defaults, from its definition: files
 * next to its bundle (and the route catalog, written at synth from the route table), node flags
 * (exec wrapper), bundler defines. Exported for the test that builds one as deployed.
 */
export function groupBuildProps(
  group: RouteGroup,
): Pick<ServiceFunctionProps, 'bundledFiles' | 'nodeFlags' | 'bundling'> {
  const bundledFiles = [
    ...(group.bundledFiles ?? []).map(({ from, to }) => ({ from: join(projectRoot, from), to })),
    ...(group.bundlesRouteCatalog
      ? [{ from: writeRouteCatalog(packageJson.version), to: ROUTE_CATALOG_FILE }]
      : []),
  ];
  return {
    ...(bundledFiles.length > 0 && { bundledFiles }),
    ...(group.nodeFlags && { nodeFlags: group.nodeFlags }),
    ...((group.define || group.searchIndex) && {
      bundling: {
        ...(group.define && { define: { ...group.define } }),
        ...(group.searchIndex && { externalModules: [...SEARCH_EXTERNAL_MODULES] }),
      },
    }),
  };
}

/**
 * The search index's clients bundle the RDS IAM token signer (and what it needs) rather than count
 * on the runtime's copy of the SDK, which holds the clients; the clients stay external as everywhere.
 */
const SEARCH_EXTERNAL_MODULES = ['@aws-sdk/client-*', '@aws-sdk/lib-*', '@aws-sdk/util-dynamodb'] as const;

/** How a worker's function is built beyond the construct's defaults: files next to its bundle, aliases. */
export function workerBuildProps(
  worker: WorkerDefinition,
): Pick<ServiceFunctionProps, 'bundledFiles' | 'aliases' | 'bundling'> {
  return {
    ...(worker.searchIndex && { bundling: { externalModules: [...SEARCH_EXTERNAL_MODULES] } }),
    ...(worker.bundledFiles && {
      bundledFiles: worker.bundledFiles.map(({ from, to }) => ({ from: join(projectRoot, from), to })),
    }),
    ...(worker.aliases && { aliases: worker.aliases }),
  };
}

/** API Gateway's own errors, in the contract's envelope. */
const gatewayErrors: readonly [ResponseType, string, string?][] = [
  [ResponseType.DEFAULT_4XX, 'BAD_REQUEST'],
  [ResponseType.DEFAULT_5XX, 'INTERNAL_ERROR'],
  [ResponseType.THROTTLED, 'RATE_LIMITED'],
  [ResponseType.QUOTA_EXCEEDED, 'RATE_LIMITED'],
  [ResponseType.ACCESS_DENIED, 'FORBIDDEN'],
  [ResponseType.REQUEST_TOO_LARGE, 'PAYLOAD_TOO_LARGE'],
  [ResponseType.UNSUPPORTED_MEDIA_TYPE, 'UNSUPPORTED_MEDIA_TYPE'],
  // Without an authorizer this only means "no such resource" (the proxies should catch those first).
  [ResponseType.MISSING_AUTHENTICATION_TOKEN, 'NOT_FOUND', '404'],
  [ResponseType.INTEGRATION_TIMEOUT, 'SERVICE_UNAVAILABLE'],
];

export interface ServiceStackProps extends StackProps {
  rateLimitPerMinute?: number;
  authCacheTtlMs?: number;
  /** Two alarms per REST route (p99 latency, 5XX rate) in a nested stack; API-wide alarms always. Default true. */
  routeAlarms?: boolean;
  /**
   * Reserved concurrency per function (route group, `realtime`, worker), over `defaultReservedConcurrency`;
   * `false` reserves none. An account must keep 100 unreserved: lower these (or pass `false`) where the
   * account's concurrency quota is below ~600.
   */
  reservedConcurrency?: false | Partial<Record<string, number>>;
  /** REST stage throttling (requests per second, burst), default 1000 / 2000. */
  apiThrottle?: { rateLimit: number; burstLimit: number };
  /** WebSocket stage throttling (messages per second, burst), default 500 / 1000. */
  realtimeThrottle?: { rateLimit: number; burstLimit: number };
}

/** The realtime connections function and the cursor key rotation (Secrets Manager runs its steps one after another). */
const ownReservedConcurrency = { realtime: 50, 'cursor-key-rotation': 1 } as const;

/**
 * Reserved concurrency of every function by name, as the route groups' and workers' definitions
 * give it (a ceiling and a floor per function): what the stack reserves unless told otherwise.
 */
export const defaultReservedConcurrency: Readonly<Record<string, number>> = {
  ...Object.fromEntries(routeTable().map((group) => [group.name, group.reservedConcurrency])),
  ...Object.fromEntries(workerDefinitions.map((worker) => [worker.name, worker.reservedConcurrency])),
  ...ownReservedConcurrency,
};

/** A function of the stack: its name (route group, worker, `realtime`) and construct id prefix. */
interface FunctionEntry {
  name: string;
  id: string;
  fn: ServiceFunction;
  /** Triggered by the table's stream. */
  stream?: boolean;
}

/** The delivery worker's outcome metric (shared/metrics-contract.ts), Sum per period. */
export const webhookDeliveries = (outcome: (typeof WEBHOOK_DELIVERIES.outcomes)[number]): Metric =>
  new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: WEBHOOK_DELIVERIES.name,
    dimensionsMap: { service: METRICS_SERVICE, [WEBHOOK_DELIVERIES.dimension]: outcome },
    statistic: 'Sum',
    period: alarmPeriod,
  });

/** Percent of webhook attempts that failed, 0 while there are too few to judge. */
const webhookFailureRate = (): MathExpression =>
  new MathExpression({
    expression: `IF(FILL(ok, 0) + FILL(failed, 0) >= ${thresholds.webhooks.minDeliveries}, 100 * FILL(failed, 0) / (FILL(ok, 0) + FILL(failed, 0)), 0)`,
    usingMetrics: { ok: webhookDeliveries('succeeded'), failed: webhookDeliveries('failed') },
    period: alarmPeriod,
    label: 'Webhook attempts failed (%)',
  });

const pascal = (name: string): string =>
  name.replace(/(^|[-_/])([a-z0-9])/g, (_match, _sep: string, char: string) => char.toUpperCase());

export class ServiceStack extends Stack {
  constructor(scope: Construct, id: string, props: ServiceStackProps = {}) {
    super(scope, id, props);
    // S3 server access logs are delivered under a bucket policy (log delivery ACLs are legacy and
    // would need ObjectWriter ownership): set here so the template does not depend on cdk.json.
    this.node.setContext('@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy', true);

    const { partitionKey, sortKey, globalIndexes, timeToLiveAttribute, streamView } = tableDefinition;
    const stringKey = (name: string) => ({ name, type: AttributeType.STRING });
    const table = new TableV2(this, 'Table', {
      partitionKey: stringKey(partitionKey),
      sortKey: stringKey(sortKey),
      globalSecondaryIndexes: globalIndexes.map((index) => ({
        indexName: index.name,
        partitionKey: stringKey(index.partitionKey),
        sortKey: stringKey(index.sortKey),
        ...(index.projection.length
          ? { projectionType: ProjectionType.INCLUDE, nonKeyAttributes: [...index.projection] }
          : { projectionType: ProjectionType.KEYS_ONLY }),
      })),
      timeToLiveAttribute,
      dynamoStream: StreamViewType[streamView],
      billing: Billing.onDemand(),
      encryption: TableEncryptionV2.awsManagedKey(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const reserved = (name: string): number | undefined => {
      if (props.reservedConcurrency === false) return undefined;
      const reserved = props.reservedConcurrency?.[name] ?? defaultReservedConcurrency[name];
      if (reserved === undefined) throw new Error(`No reserved concurrency for ${name}`);
      return reserved;
    };

    // Log groups under a customer key; CloudWatch Logs may use it for this account's log groups only.
    const logsKey = new Key(this, 'LogsKey', {
      description: 'Encrypts the log groups of the functions and of the APIs',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    logsKey.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchLogsUseTheKeyForThisAccountsLogGroups',
        principals: [new ServicePrincipal(`logs.${this.region}.amazonaws.com`)],
        actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
        resources: ['*'],
        conditions: {
          ArnLike: {
            'kms:EncryptionContext:aws:logs:arn': `arn:${this.partition}:logs:${this.region}:${this.account}:log-group:*`,
          },
        },
      }),
    );
    const logGroup = (id: string) =>
      new LogGroup(this, id, { retention: RetentionDays.ONE_MONTH, encryptionKey: logsKey });

    const operationsKey = new Key(this, 'OperationsKey', {
      description: 'Encrypts the alarm topic',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const alarms = new ServiceAlarms(this, 'Alarms', { key: operationsKey });
    // A nested stack of its own: the network and database add ~40 resources, and the main stack
    // stays clear of CloudFormation's 500.
    const searchIndex = new SearchIndex(
      new NestedStack(this, 'Search', { description: 'the search index: Aurora PostgreSQL and its network' }),
      'SearchIndex',
      { logsKey },
    );
    // Alarms are created at the end, from these lists, once every resource exists.
    const paging: [string, PagingAlarm][] = [];
    const deadLetterQueues: [string, Queue][] = [];
    const dashboardQueues: DashboardQueue[] = [];

    const queues = new Map<QueueName, Queue>();
    for (const definition of queueDefinitions) {
      const queueId = pascal(definition.name);
      const queueDefaults = { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true };
      const deadLetterQueue = new Queue(this, `${queueId}DeadLetterQueue`, {
        ...queueDefaults,
        retentionPeriod: Duration.days(14),
      });
      Tags.of(deadLetterQueue).add('service:queue', deadLetterName(definition));
      acknowledge(deadLetterQueue, { 'Serverless-SQSRedrivePolicy': reasons.deadLetterQueue });
      const queue = new Queue(this, `${queueId}Queue`, {
        ...queueDefaults,
        visibilityTimeout: Duration.seconds(definition.visibilityTimeoutSeconds),
        deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: definition.maxReceiveCount },
      });
      Tags.of(queue).add('service:queue', definition.name);
      queues.set(definition.name, queue);
      deadLetterQueues.push([`${queueId}DeadLetters`, deadLetterQueue]);
      dashboardQueues.push(
        { name: definition.name, queue, kind: 'queue' },
        { name: definition.name, queue: deadLetterQueue, kind: 'dead letters' },
      );
    }

    // S3 server access logs of the service's buckets. A log target cannot use SSE-KMS; it keeps its
    // own logs nowhere (a bucket logging to itself loops), and its objects expire after 90 days.
    const accessLogsBucket = new Bucket(this, 'AccessLogsBucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: BucketEncryption.S3_MANAGED,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [
        { expiration: Duration.days(90), abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      autoDeleteObjects: false,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const bucketKey = new Key(this, 'BucketsKey', {
      description: 'Encrypts the objects of the service buckets (exports)',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const buckets = new Map<BucketName, Bucket>();
    // Attachments: a bucket of their own (browser PUTs, SSE-S3, optional malware scan).
    const uploadCorsOrigins = new CfnParameter(this, 'UploadCorsOrigins', {
      type: 'CommaDelimitedList',
      default: '*',
      description:
        'Origins browsers may PUT attachments from (the sites embedding the widget), comma-separated; * allows any page holding a presigned URL',
    });
    const malwareScan = new CfnParameter(this, 'MalwareScan', {
      type: 'String',
      default: 'false',
      allowedValues: ['true', 'false'],
      description:
        'true: GuardDuty Malware Protection for S3 scans every attachment; a flagged file is rejected and never served',
    });
    const malwareScanEnabled = new CfnCondition(this, 'MalwareScanEnabled', {
      expression: Fn.conditionEquals(malwareScan.valueAsString, 'true'),
    });
    for (const definition of bucketDefinitions) {
      if (definition.name === 'uploads') {
        const scanResults = queues.get('malware-scan-results');
        if (!scanResults) throw new Error('No malware-scan-results queue');
        const uploads = new UploadsBucket(this, 'Uploads', {
          definition,
          accessLogs: accessLogsBucket,
          corsOrigins: uploadCorsOrigins.valueAsList,
          malwareScan: malwareScanEnabled,
          scanResults,
        });
        buckets.set(definition.name, uploads.bucket);
        continue;
      }
      // Versioning: off, decided. Objects are generated files (a transcript can be generated again),
      // written once under a fresh key and expiring within days; versions would keep deleted or
      // purged customer text past that expiry and past a conversation's purge, which must not
      // happen. Overwrites and deletions are by the service only (no delete grant exists).
      const bucket = new Bucket(this, `${pascal(definition.name)}Bucket`, {
        blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
        enforceSSL: true,
        encryption: BucketEncryption.KMS,
        encryptionKey: bucketKey,
        bucketKeyEnabled: true,
        versioned: false,
        serverAccessLogsBucket: accessLogsBucket,
        serverAccessLogsPrefix: `${definition.name}/`,
        lifecycleRules: [
          {
            expiration: Duration.days(definition.expireAfterDays),
            abortIncompleteMultipartUploadAfter: Duration.days(1),
          },
        ],
        autoDeleteObjects: false,
        removalPolicy: RemovalPolicy.RETAIN,
      });
      buckets.set(definition.name, bucket);
    }

    // Read by the functions that sign cursors at cold start (shared/cursor-keys.ts), never put in
    // their environment: a JSON ring { current, next, previous } once rotated (a plain key until
    // then), so a rotation never invalidates a cursor in flight.
    const cursorSigningKey = new Secret(this, 'CursorSigningKey', {
      description:
        'HMAC key ring of pagination cursors (JSON {current,next,previous}; a plain key before the first rotation), rotated every 30 days',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
    });
    const cursorKeysSecret: SecretRead = { secret: cursorSigningKey, env: 'CURSOR_SIGNING_KEY_SECRET_ARN' };
    // Webhook signing secrets are encrypted with KMS (organization as encryption context): only the
    // API function that creates and rotates them may encrypt, only the delivery worker may decrypt.
    const webhookSecretsKey = new Key(this, 'WebhookSecretsKey', {
      description: 'Encrypts webhook signing secrets at rest',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const withWebhookSecrets = (fn: ServiceFunction, access: 'seal' | 'open') => {
      fn.addEnvironment('WEBHOOK_SECRETS_KMS_KEY_ID', webhookSecretsKey.keyArn);
      if (access === 'seal') {
        webhookSecretsKey.grantEncrypt(fn);
        const grant =
          "CDK's KMS encrypt grant (kms:Encrypt, kms:ReEncrypt*, kms:GenerateDataKey*) on the one webhook-secrets key; the function only calls Encrypt.";
        acknowledge(fn, {
          'AwsSolutions-IAM5[Action::kms:ReEncrypt*]': grant,
          'AwsSolutions-IAM5[Action::kms:GenerateDataKey*]': grant,
        });
      } else webhookSecretsKey.grantDecrypt(fn);
    };
    // AI provider API keys: sealed and opened only by the platform admin's function, under their
    // own key (the provider id as encryption context), so no other function can read them.
    const aiProviderKeysKey = new Key(this, 'AiProviderKeysKey', {
      description: 'Encrypts the API keys of platform AI providers at rest',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const withAiProviderKeys = (fn: ServiceFunction) => {
      fn.addEnvironment('AI_PROVIDER_KEYS_KMS_KEY_ID', aiProviderKeysKey.keyArn);
      aiProviderKeysKey.grantEncryptDecrypt(fn);
      const grant =
        "CDK's KMS encrypt/decrypt grant (kms:ReEncrypt*, kms:GenerateDataKey* with Encrypt and Decrypt) on the one AI-provider-keys key; the function only calls Encrypt and Decrypt.";
      acknowledge(fn, {
        'AwsSolutions-IAM5[Action::kms:ReEncrypt*]': grant,
        'AwsSolutions-IAM5[Action::kms:GenerateDataKey*]': grant,
      });
    };
    // The Discord bot token: issued by Discord, so its value is put here by an operator after the
    // first deploy (docs/operations.md); functions read it at run time, never from their environment.
    const discordBotToken = new Secret(this, 'DiscordBotToken', {
      description:
        'Discord bot token (the value after "Bot "), put here after deploying; read by the functions that call Discord',
    });
    acknowledge(discordBotToken, {
      'AwsSolutions-SMG4':
        'A Discord bot token is issued and rotated in Discord’s developer portal, not by a rotation function: an operator puts the new value here (docs/operations.md, Discord).',
    });
    const discordTokenSecret: SecretRead = { secret: discordBotToken, env: 'DISCORD_BOT_TOKEN_SECRET_ARN' };
    const adminTokenHash = new CfnParameter(this, 'PlatformAdminTokenSha256', {
      type: 'String',
      noEcho: true,
      allowedPattern: '^[0-9a-fA-F]{64}$',
      description: 'SHA-256 (hex) of the platform admin token',
    });

    const logLevel = new CfnParameter(this, 'LogLevel', {
      type: 'String',
      default: 'INFO',
      allowedValues: ['DEBUG', 'INFO', 'WARN', 'ERROR'],
      description: 'Log level of every function (INFO writes one access line per request)',
    });
    const debugLogSampleRate = new CfnParameter(this, 'DebugLogSampleRate', {
      type: 'Number',
      default: 0,
      minValue: 0,
      maxValue: 1,
      description: 'Share of requests (0-1) logged at DEBUG whatever LogLevel says, drawn per request',
    });
    const transcriptSender = new CfnParameter(this, 'TranscriptSenderAddress', {
      type: 'String',
      default: 'no-reply@example.com',
      allowedPattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$',
      description:
        'From address of transcript e-mails: an address, or an address of a domain, verified in SES in this region',
    });
    const withEmail = (fn: ServiceFunction) => {
      fn.addEnvironment('TRANSCRIPT_EMAIL_FROM', transcriptSender.valueAsString);
      // The identity SES authorizes against is the verified address or its domain: both, nothing else.
      const identity = (name: string) =>
        `arn:${this.partition}:ses:${this.region}:${this.account}:identity/${name}`;
      fn.addToRolePolicy(
        new PolicyStatement({
          actions: ['ses:SendEmail'],
          resources: [
            identity(transcriptSender.valueAsString),
            identity(Fn.select(1, Fn.split('@', transcriptSender.valueAsString))),
          ],
        }),
      );
    };

    const environment: Record<string, string> = {
      SERVICE_VERSION: packageJson.version,
      POWERTOOLS_LOG_LEVEL: logLevel.valueAsString,
      POWERTOOLS_LOGGER_SAMPLE_RATE: debugLogSampleRate.valueAsString,
      PLATFORM_ADMIN_TOKEN_SHA256: adminTokenHash.valueAsString,
      ...(props.rateLimitPerMinute && { RATE_LIMIT_PER_MINUTE: String(props.rateLimitPerMinute) }),
      ...(props.authCacheTtlMs && { AUTH_CACHE_TTL_MS: String(props.authCacheTtlMs) }),
    };

    const accessLogs = logGroup('ApiAccessLogs');
    const apiThrottle = props.apiThrottle ?? { rateLimit: 1000, burstLimit: 2000 };
    const api = new RestApi(this, 'Api', {
      // The ApiName dimension of every API Gateway metric: unique per stack, not CDK's default 'Api'.
      restApiName: `${this.stackName}-api`,
      description: 'Customer-conversation platform public API',
      cloudWatchRole: true,
      disableExecuteApiEndpoint: false,
      deployOptions: {
        stageName: 'v1',
        tracingEnabled: true,
        metricsEnabled: true,
        loggingLevel: MethodLoggingLevel.ERROR,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.jsonWithStandardFields(),
        // Below the account's regional limit (10,000/s), so one stage cannot take all of it.
        throttlingRateLimit: apiThrottle.rateLimit,
        throttlingBurstLimit: apiThrottle.burstLimit,
      },
    });
    const inMiddleware =
      'Authentication and authorization happen in the shared middleware of every function (five credential kinds, SHA-256 hashed, constant-time compare; caller kind, module, scope and admin role checks; tenancy by construction), not in an API Gateway or Cognito authorizer: API keys, operator sessions, visitor and widget tokens and the platform token are the contract, and the public routes (health, openapi.json, docs) need none.';
    acknowledge(api, {
      'AwsSolutions-APIG4': inMiddleware,
      'AwsSolutions-COG4': inMiddleware,
      'AwsSolutions-APIG2':
        "Requests are validated strictly in the shared middleware (zod strict schemas, 422 with the failing field), from the same schemas the OpenAPI document is generated from; API Gateway's validator would duplicate them and answer outside the contract's error envelope.",
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]':
        "CDK's account-level role that lets API Gateway write execution and access logs; the managed policy is the one AWS documents for it.",
    });
    for (const [type, code, statusCode] of gatewayErrors) {
      api.addGatewayResponse(`${type.responseType}Response`, {
        type,
        ...(statusCode && { statusCode }),
        templates: {
          'application/json': `{"error":{"code":"${code}","message":$context.error.messageString,"correlationId":"$context.requestId"}}`,
        },
      });
    }
    const apiRequests = api.metricCount({ statistic: 'Sum', period: alarmPeriod });
    paging.push(
      [
        'ApiLatency',
        {
          metric: new MathExpression({
            expression: `IF(FILL(requests, 0) >= ${thresholds.api.minRequests}, latency, 0)`,
            usingMetrics: { requests: apiRequests, latency: api.metricLatency({ statistic: 'p99' }) },
            period: alarmPeriod,
            label: 'REST API p99 latency (ms)',
          }),
          summary: `REST API: p99 latency above ${thresholds.api.p99LatencyMs} ms.`,
          runbook: 'api-latency',
          threshold: thresholds.api.p99LatencyMs,
          datapoints: thresholds.api.datapoints,
          periods: thresholds.api.periods,
        },
      ],
      [
        'ApiErrorRate',
        {
          metric: new MathExpression({
            expression: `IF(FILL(requests, 0) >= ${thresholds.api.minRequests}, 100 * FILL(errors, 0) / requests, 0)`,
            usingMetrics: { requests: apiRequests, errors: api.metricServerError({ statistic: 'Sum' }) },
            period: alarmPeriod,
            label: 'REST API 5XX rate (%)',
          }),
          summary: `REST API: more than ${thresholds.api.errorRatePercent}% of responses are 5XX.`,
          runbook: 'api-error-rate',
          threshold: thresholds.api.errorRatePercent,
          datapoints: thresholds.api.datapoints,
          periods: thresholds.api.periods,
        },
      ],
    );

    /** Every function of the stack, for the per-function alarms and graphs. */
    const functions: FunctionEntry[] = [];

    const integrations = new Map<string, LambdaIntegration>();
    for (const group of routeTable()) {
      const groupId = pascal(group.name);
      const needs = group;
      const fn = new ServiceFunction(this, `${groupId}Function`, {
        entry: groupEntry(group.name),
        description: group.description,
        // SERVICE_FUNCTION: the `function` dimension of its metrics (stable across deployments).
        environment: { ...environment, SERVICE_FUNCTION: group.name },
        logsKey,
        reservedConcurrentExecutions: reserved(group.name),
        ...groupBuildProps(group),
        ...(needs.streams && { timeout: Duration.seconds(needs.streams.timeoutSeconds) }),
        ...(needs.searchIndex && searchIndex.networkProps()),
        secrets: [
          ...(needs.readsDiscordToken ? [discordTokenSecret] : []),
          ...(needs.readsCursorKeys ? [cursorKeysSecret] : []),
        ],
      }).bindTable(table, 'readWrite');
      if (needs.searchIndex) searchIndex.connect(fn);
      if (needs.sealsWebhookSecrets) withWebhookSecrets(fn, 'seal');
      if (needs.sendsEmail) withEmail(fn);
      if (needs.holdsAiProviderKeys) withAiProviderKeys(fn);
      for (const name of needs.sendsTo ?? []) {
        const definition = queueDefinitions.find((q) => q.name === name);
        const queue = queues.get(name);
        if (definition && queue) fn.bindQueue(queue, definition);
      }
      for (const [name, access] of needs.buckets ?? []) {
        const definition = bucketDefinitions.find((b) => b.name === name);
        const bucket = buckets.get(name);
        if (definition && bucket) fn.bindBucket(bucket, definition, access);
      }
      Tags.of(fn).add(ROUTE_GROUP_TAG, group.name);
      // One API-wide permission per function instead of one per method: keeps the resource policy
      // far below Lambda's 20 KB limit however many routes a group has.
      integrations.set(
        group.name,
        new LambdaIntegration(fn, {
          scopePermissionToMethod: false,
          ...(needs.streams && { responseTransferMode: ResponseTransferMode.STREAM }),
        }),
      );
      functions.push({ name: group.name, id: groupId, fn });
    }

    // The realtime channel: a WebSocket API whose routes all reach one connection handler.
    const realtimeFunction = new ServiceFunction(this, 'RealtimeConnectionsFunction', {
      entry: realtimeConnectionsEntry,
      description: 'realtime WebSocket connections: authenticates and records them',
      environment: { ...environment, SERVICE_FUNCTION: 'realtime' },
      logsKey,
      reservedConcurrentExecutions: reserved('realtime'),
    }).bindTable(table, 'readWrite');
    Tags.of(realtimeFunction).add('service:realtime', 'connections');
    const realtimeIntegration = (id: string) => new WebSocketLambdaIntegration(id, realtimeFunction);
    const realtimeApi = new WebSocketApi(this, 'RealtimeApi', {
      description: 'Realtime notices for operators and visitors',
      connectRouteOptions: { integration: realtimeIntegration('RealtimeConnect') },
      disconnectRouteOptions: { integration: realtimeIntegration('RealtimeDisconnect') },
      defaultRouteOptions: { integration: realtimeIntegration('RealtimeDefault') },
    });
    acknowledge(realtimeApi, {
      'AwsSolutions-APIG4':
        'The $connect handler authenticates the session or visitor token itself (shared middleware code) and refuses the connection with 401; $disconnect and $default only act on a connection it accepted.',
    });
    const realtimeThrottle = props.realtimeThrottle ?? { rateLimit: 500, burstLimit: 1000 };
    const realtimeStage = new WebSocketStage(this, 'RealtimeStage', {
      webSocketApi: realtimeApi,
      stageName: 'v1',
      autoDeploy: true,
      throttle: realtimeThrottle,
      accessLogSettings: {
        destination: new WebSocketLogDestination(logGroup('RealtimeAccessLogs')),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            connectionId: '$context.connectionId',
            routeKey: '$context.routeKey',
            eventType: '$context.eventType',
            status: '$context.status',
            requestTime: '$context.requestTime',
            ip: '$context.identity.sourceIp',
            integrationStatus: '$context.integration.status',
            integrationLatency: '$context.integration.latency',
            error: '$context.error.message',
          }),
        ),
      },
    });
    functions.push({ name: 'realtime', id: 'RealtimeConnections', fn: realtimeFunction });

    const streamFailureQueues: [string, Queue][] = [];
    for (const worker of workerDefinitions) {
      const workerId = pascal(worker.name);
      const fn = new ServiceFunction(this, `${workerId}Worker`, {
        entry: workerEntry(worker.name),
        description: worker.description,
        timeout: Duration.seconds(worker.timeoutSeconds),
        environment: { ...environment, SERVICE_FUNCTION: worker.name },
        logsKey,
        reservedConcurrentExecutions: reserved(worker.name),
        ...workerBuildProps(worker),
        ...(worker.searchIndex && searchIndex.networkProps()),
        ...(worker.readsDiscordToken && { secrets: [discordTokenSecret] }),
      });
      if (worker.searchIndex) searchIndex.connect(fn);
      if (worker.table) fn.bindTable(table, worker.table);
      for (const [name, access] of worker.buckets ?? []) {
        const definition = bucketDefinitions.find((b) => b.name === name);
        const bucket = buckets.get(name);
        if (!definition || !bucket) throw new Error(`Worker ${worker.name}: no bucket ${name}`);
        fn.bindBucket(bucket, definition, access);
      }
      for (const name of worker.sendsTo) {
        const definition = queueDefinitions.find((q) => q.name === name);
        const queue = queues.get(name);
        if (!definition || !queue) throw new Error(`Worker ${worker.name}: no queue ${name}`);
        fn.bindQueue(queue, definition);
      }
      if (worker.opensWebhookSecrets) withWebhookSecrets(fn, 'open');
      if (worker.pushesRealtime) {
        fn.addEnvironment('REALTIME_ENDPOINT', realtimeStage.callbackUrl);
        realtimeApi.grantManageConnections(fn);
        // cdk-nag names the resource as the template has it: pseudo parameters or the env's values.
        const named = (value: string, pseudo: string) =>
          Token.isUnresolved(value) ? `<AWS::${pseudo}>` : value;
        const apiLogicalId = this.resolve(this.getLogicalId(realtimeApi.node.defaultChild as CfnElement));
        const connections = `arn:${named(this.partition, 'Partition')}:execute-api:${named(this.region, 'Region')}:${named(this.account, 'AccountId')}:<${apiLogicalId}>/*/*/@connections/*`;
        acknowledge(fn, {
          [`AwsSolutions-IAM5[Resource::${connections}]`]:
            'Posting to a WebSocket connection names the connection, known only at run time; the grant is limited to the realtime API.',
        });
      }
      const { source } = worker;
      if (source.kind === 'queue') {
        const queue = queues.get(source.queue);
        const definition = queueDefinitions.find((q) => q.name === source.queue);
        // Lambda refuses an SQS trigger whose visibility timeout is shorter than the function's timeout.
        if (!queue || !definition || definition.visibilityTimeoutSeconds < worker.timeoutSeconds) {
          throw new Error(`Worker ${worker.name}: queue ${source.queue} is missing or times out before it`);
        }
        // Never more batches in flight than the function may run: throttled receives count towards
        // maxReceiveCount and would dead-letter healthy messages.
        const ceiling = reserved(worker.name);
        if (ceiling !== undefined && ceiling < 2) {
          throw new Error(`Worker ${worker.name}: a queue worker needs a reserved concurrency of 2 or more`);
        }
        acknowledge(fn, {
          'Serverless-LambdaEventSourceMappingDestination':
            "An SQS event source has no on-failure destination: a message that keeps failing returns to the queue and moves to the queue's dead-letter queue after maxReceiveCount (alarmed; redrive in docs/operations.md).",
        });
        fn.addEventSource(
          new SqsEventSource(queue, {
            batchSize: source.batchSize,
            maxConcurrency: Math.min(source.maxConcurrency, ceiling ?? source.maxConcurrency),
            reportBatchItemFailures: true,
          }),
        );
      } else {
        // After its retries a failing batch is not dropped: its shard and sequence numbers land here.
        const failures = new Queue(this, `${workerId}StreamFailures`, {
          encryption: QueueEncryption.SQS_MANAGED,
          enforceSSL: true,
          retentionPeriod: Duration.days(14),
        });
        Tags.of(failures).add('service:stream-failures', worker.name);
        acknowledge(failures, {
          'AwsSolutions-SQS3': reasons.deadLetterQueue,
          'Serverless-SQSRedrivePolicy': reasons.deadLetterQueue,
        });
        streamFailureQueues.push([`${workerId}StreamFailures`, failures]);
        dashboardQueues.push({ name: worker.name, queue: failures, kind: 'stream failures' });
        fn.addEventSource(
          new DynamoEventSource(table, {
            startingPosition: StartingPosition.TRIM_HORIZON,
            batchSize: source.batchSize,
            reportBatchItemFailures: true,
            bisectBatchOnError: true,
            retryAttempts: source.retryAttempts,
            maxRecordAge: Duration.seconds(source.maxRecordAgeSeconds),
            onFailure: new SqsDlq(failures),
            // Only the entities the worker reads invoke it (the local consumer applies the same filter).
            filters: [
              FilterCriteria.filter({
                dynamodb: { NewImage: { entity: { S: FilterRule.or(...source.entities) } } },
              }),
              ...(source.removals
                ? [
                    FilterCriteria.filter({
                      eventName: FilterRule.isEqual('REMOVE'),
                      dynamodb: { OldImage: { entity: { S: FilterRule.or(...source.entities) } } },
                    }),
                  ]
                : []),
            ],
          }),
        );
      }
      Tags.of(fn).add(WORKER_TAG, worker.name);
      functions.push({ name: worker.name, id: `${workerId}Worker`, fn, stream: source.kind === 'stream' });
    }

    // A custom rotation function: hosted rotations only exist for database credentials.
    const rotation = new ServiceFunction(this, 'CursorKeyRotationFunction', {
      entry: cursorKeyRotationEntry,
      description: 'rotates the cursor signing key ring (Secrets Manager rotation steps)',
      timeout: Duration.seconds(30),
      memorySize: 256,
      logsKey,
      reservedConcurrentExecutions: reserved('cursor-key-rotation'),
    });
    Tags.of(rotation).add('service:rotation', 'cursor-signing-key');
    cursorSigningKey.addRotationSchedule('Rotation', {
      rotationLambda: rotation,
      automaticallyAfter: Duration.days(30),
    });
    functions.push({ name: 'cursor-key-rotation', id: 'CursorKeyRotation', fn: rotation });

    const fallback = integrations.get(fallbackGroup);
    if (!fallback) throw new Error(`Fallback group "${fallbackGroup}" is not in the route table`);

    // The API's method tree (a method per route and an ANY fallback per path) is most of the
    // template: a nested stack of its own keeps the main stack clear of CloudFormation's 500
    // resources. Its methods join the stage through the deployment below.
    const methodTree = new NestedStack(this, 'ApiMethods', {
      description: "the REST API's resources and methods, from the route table",
    });
    acknowledge(methodTree, {
      'AwsSolutions-APIG4': inMiddleware,
      'AwsSolutions-COG4': inMiddleware,
    });
    const treeApi = RestApi.fromRestApiAttributes(methodTree, 'Api', {
      restApiId: api.restApiId,
      rootResourceId: api.restApiRootResourceId,
      restApiName: api.restApiName,
    });
    const routed = new Set<IResource>();
    const routeMethods: (RoutedMethod & { group: string })[] = [];
    for (const group of routeTable()) {
      const integration = integrations.get(group.name);
      if (!integration) continue;
      for (const route of group.routes) {
        const resource = resourceForPath(treeApi.root, route.path);
        const method: Method = resource.addMethod(route.method, integration);
        routeMethods.push({ key: `${route.method} ${route.path}`, method, group: group.name });
        routed.add(resource);
      }
    }
    // Unmatched methods on a known path reach the fallback function, which answers 405 with `Allow`.
    for (const resource of routed) resource.addMethod('ANY', fallback);
    // Unknown paths reach it too (404 in the envelope) rather than API Gateway's 403 "Missing Authentication Token".
    const apiRoot = resourceForPath(treeApi.root, '/api');
    if (!routed.has(apiRoot)) apiRoot.addMethod('ANY', fallback);
    apiRoot.addProxy({ defaultIntegration: fallback, anyMethod: true });
    // The root's own stay here: a REST API with no method of its own does not synthesize.
    api.root.addMethod('ANY', fallback);
    api.root.addProxy({ defaultIntegration: fallback, anyMethod: true });
    // A new deployment whenever the routes change, made once the method tree exists.
    const deployment = api.latestDeployment;
    if (!deployment) throw new Error('The REST API has no deployment');
    deployment.node.addDependency(methodTree);
    deployment.addToLogicalId(
      routeTable().map((group) => [group.name, group.routes.map((route) => `${route.method} ${route.path}`)]),
    );

    paging.push(
      ...this.queueAlarms(deadLetterQueues, thresholds.deadLetters, 'dead-letters'),
      ...this.queueAlarms(streamFailureQueues, thresholds.streamFailures, 'stream-failures'),
      ...this.tableAlarms(table),
      [
        'SearchIndexLag',
        {
          metric: new Metric({
            namespace: METRICS_NAMESPACE,
            metricName: SEARCH_METRICS.indexLag,
            dimensionsMap: { service: METRICS_SERVICE, function: 'search-index' },
            statistic: 'p99',
            period: alarmPeriod,
            label: 'search index lag p99 (ms)',
          }),
          summary: 'Search: changes take more than 5 s (p99) from their commit to the search index.',
          runbook: 'search-index-lag',
          threshold: 5_000,
          datapoints: 2,
          periods: 3,
        },
      ],
      [
        'WebhookFailureRate',
        {
          metric: webhookFailureRate(),
          summary: `Webhooks: more than ${thresholds.webhooks.failureRatePercent}% of delivery attempts fail.`,
          runbook: 'webhook-failure-rate',
          threshold: thresholds.webhooks.failureRatePercent,
          datapoints: thresholds.webhooks.datapoints,
          periods: thresholds.webhooks.periods,
        },
      ],
    );
    // The paging alarms, the dashboard and the saved queries: a nested stack of their own, like the
    // function and route alarms, so the main stack's resources (the API's method tree above all)
    // stay clear of CloudFormation's 500.
    const operations = new NestedStack(this, 'Operations', {
      description: 'paging alarms, the dashboard and the saved log queries',
    });
    const stackAlarms = paging.map(([alarmId, alarm]) => alarms.add(`${alarmId}Alarm`, alarm, operations));
    // Two or three alarms per function: a nested stack of their own keeps the main stack's count of
    // resources (API methods above all) clear of CloudFormation's 500 as routes and workers are added.
    const functionAlarms = new NestedStack(this, 'FunctionAlarms', {
      description: 'errors, throttles and stream iterator-age alarms of every function',
    });
    for (const [alarmId, alarm] of this.functionAlarms(functions))
      alarms.add(`${alarmId}Alarm`, alarm, functionAlarms);
    if (props.routeAlarms ?? true) {
      new RouteAlarms(this, 'RouteAlarms', { routes: routeMethods, stage: api.deploymentStage, alarms });
    }

    new RateLimitedWebAcl(this, 'WebAcl', {
      stageArn: api.deploymentStage.stageArn,
      dependsOn: api.deploymentStage,
    });

    new ServiceDashboard(operations, 'Dashboard', {
      api,
      stage: api.deploymentStage,
      routes: routeMethods,
      functions,
      table,
      indexNames: tableDefinition.globalIndexes.map((index) => index.name),
      queues: dashboardQueues,
      realtime: { apiId: realtimeApi.apiId, stageName: realtimeStage.stageName },
      webhookDeliveries: { succeeded: webhookDeliveries('succeeded'), failed: webhookDeliveries('failed') },
      // The per-route alarms stay out of it (their routes' graphs are there): no nested-stack outputs.
      alarms: stackAlarms,
    });
    new LogQueries(operations, 'LogQueries', {
      functionLogs: functions.map(({ fn }) => fn.logGroup),
      accessLog: accessLogs,
      folder: this.stackName,
    });

    new CfnOutput(this, 'AlarmTopicArn', { value: alarms.topic.topicArn });
    new CfnOutput(this, 'RealtimeUrl', { value: realtimeStage.url });
    new CfnOutput(this, 'ApiUrl', { value: api.url });
    new CfnOutput(this, 'TableName', { value: table.tableName });
  }

  /** Depth and age of the oldest message of queues nobody consumes: dead letters, stream failures. */
  private queueAlarms(
    queues: readonly [string, Queue][],
    limits: { depth: number; oldestAgeSeconds: number },
    runbook: string,
  ): [string, PagingAlarm][] {
    return queues.flatMap(([id, queue]): [string, PagingAlarm][] => [
      [
        id,
        {
          metric: queue.metricApproximateNumberOfMessagesVisible({
            statistic: 'Maximum',
            period: alarmPeriod,
          }),
          summary: `${id}: messages are waiting (work that failed every retry).`,
          runbook,
          threshold: limits.depth,
        },
      ],
      [
        `${id}Age`,
        {
          metric: queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: alarmPeriod }),
          summary: `${id}: the oldest message has waited more than ${limits.oldestAgeSeconds / 3600} h.`,
          runbook,
          threshold: limits.oldestAgeSeconds,
        },
      ],
    ]);
  }

  /** Errors and throttles of every function, as before; stream workers also on falling behind. */
  private functionAlarms(functions: readonly FunctionEntry[]): [string, PagingAlarm][] {
    return functions.flatMap(({ name, id, fn, stream }): [string, PagingAlarm][] => [
      [
        `${id}Errors`,
        {
          metric: fn.metricErrors({ statistic: 'Sum', period: alarmPeriod }),
          summary: `Function ${name}: invocations failed.`,
          runbook: 'function-errors',
          threshold: thresholds.functionErrors,
        },
      ],
      [
        `${id}Throttles`,
        {
          metric: fn.metricThrottles({ statistic: 'Sum', period: alarmPeriod }),
          summary: `Function ${name}: invocations throttled (reserved concurrency or account limit).`,
          runbook: 'function-throttles',
          threshold: thresholds.functionThrottles,
        },
      ],
      ...(stream
        ? ([
            [
              `${id}IteratorAge`,
              {
                metric: fn.metric('IteratorAge', { statistic: 'Maximum', period: alarmPeriod }),
                summary: `Function ${name}: stream records wait more than ${thresholds.streamIteratorAgeMs / 60_000} min.`,
                runbook: 'stream-iterator-age',
                threshold: thresholds.streamIteratorAgeMs,
              },
            ],
          ] satisfies [string, PagingAlarm][])
        : []),
    ]);
  }

  /** Read + write throttle events of the table, and of each index (their own capacity). */
  private tableAlarms(table: TableV2): [string, PagingAlarm][] {
    const { dynamoThrottleEvents: limits } = thresholds;
    return [undefined, ...tableDefinition.globalIndexes.map((index) => index.name)].map(
      (index): [string, PagingAlarm] => {
        const throttles = (metricName: string) =>
          new Metric({
            namespace: 'AWS/DynamoDB',
            metricName,
            dimensionsMap: {
              TableName: table.tableName,
              ...(index && { GlobalSecondaryIndexName: index }),
            },
            statistic: 'Sum',
            period: alarmPeriod,
          });
        const what = index ? `index ${index}` : 'table';
        return [
          `${index ? pascal(index) : 'Table'}Throttles`,
          {
            metric: new MathExpression({
              expression: 'FILL(reads, 0) + FILL(writes, 0)',
              usingMetrics: {
                reads: throttles('ReadThrottleEvents'),
                writes: throttles('WriteThrottleEvents'),
              },
              period: alarmPeriod,
              label: `DynamoDB ${what} throttle events`,
            }),
            summary: `DynamoDB ${what}: requests throttled.`,
            runbook: 'dynamodb-throttling',
            threshold: limits.count,
            datapoints: limits.datapoints,
            periods: limits.periods,
          },
        ];
      },
    );
  }
}

/**
 * Finds or creates the resource for `/a/{b}/c`. API Gateway rejects two differently named path
 * variables under one parent only at deploy time; failing here points at the offending route.
 */
function resourceForPath(root: IResource, path: string): IResource {
  return path
    .split('/')
    .filter(Boolean)
    .reduce((parent, part) => {
      const existing = parent.getResource(part);
      if (existing) return existing;
      const variable = (segment = '') => segment.startsWith('{');
      const sibling = parent.node.children.find(
        (child): child is Resource => child instanceof Resource && variable(child.path.split('/').pop()),
      );
      if (variable(part) && sibling) throw new Error(`${parent.path}/${part} clashes with ${sibling.path}`);
      return parent.addResource(part);
    }, root);
}
