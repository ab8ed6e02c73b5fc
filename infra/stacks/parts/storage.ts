import { CfnCondition, CfnParameter, Duration, Fn, NestedStack, RemovalPolicy, Tags } from 'aws-cdk-lib';
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
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { tableDefinition } from '../../../shared/db/table';
import { bucketDefinitions, deadLetterName, queueDefinitions } from '../../../shared/resources';
import type { DashboardQueue } from '../../constructs/dashboard';
import { SearchIndex } from '../../constructs/search-index';
import { UploadsBucket } from '../../constructs/uploads-bucket';
import { acknowledge, reasons } from '../../nag';
import { pascal, type StackScope } from './context';

export type QueueName = (typeof queueDefinitions)[number]['name'];
export type BucketName = (typeof bucketDefinitions)[number]['name'];

/**
 * Where the service keeps things: the table (its definition is the one the code uses), the log
 * groups' key, the queues and their dead letters, the buckets (and their access logs and key), and
 * the search index in a nested stack.
 */
export class Storage {
  readonly table: TableV2;
  readonly logsKey: Key;
  readonly searchIndex: SearchIndex;
  readonly queues: ReadonlyMap<QueueName, Queue>;
  readonly buckets: ReadonlyMap<BucketName, Bucket>;
  /** Dead-letter queues by alarm id (nobody consumes them: alarmed on depth and age). */
  readonly deadLetterQueues: readonly [string, Queue][];
  readonly dashboardQueues: readonly DashboardQueue[];
  /** A one-month log group under the logs key, in the stack's scope. */
  readonly logGroup: (id: string) => LogGroup;

  constructor(stack: StackScope) {
    const { partitionKey, sortKey, globalIndexes, timeToLiveAttribute, streamView } = tableDefinition;
    const stringKey = (name: string) => ({ name, type: AttributeType.STRING });
    const table = new TableV2(stack, 'Table', {
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

    // Log groups under a customer key; CloudWatch Logs may use it for this account's log groups only.
    const logsKey = new Key(stack, 'LogsKey', {
      description: 'Encrypts the log groups of the functions and of the APIs',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    logsKey.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchLogsUseTheKeyForThisAccountsLogGroups',
        principals: [new ServicePrincipal(`logs.${stack.region}.amazonaws.com`)],
        actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
        resources: ['*'],
        conditions: {
          ArnLike: {
            'kms:EncryptionContext:aws:logs:arn': `arn:${stack.partition}:logs:${stack.region}:${stack.account}:log-group:*`,
          },
        },
      }),
    );
    const logGroup = (id: string) =>
      new LogGroup(stack, id, { retention: RetentionDays.ONE_MONTH, encryptionKey: logsKey });

    // A nested stack of its own: the network and database add ~40 resources, and the main stack
    // stays clear of CloudFormation's 500.
    const searchIndex = new SearchIndex(
      new NestedStack(stack, 'Search', {
        description: 'the search index: Aurora PostgreSQL and its network',
      }),
      'SearchIndex',
      { logsKey },
    );
    const deadLetterQueues: [string, Queue][] = [];
    const dashboardQueues: DashboardQueue[] = [];

    const queues = new Map<QueueName, Queue>();
    for (const definition of queueDefinitions) {
      const queueId = pascal(definition.name);
      const queueDefaults = { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true };
      const deadLetterQueue = new Queue(stack, `${queueId}DeadLetterQueue`, {
        ...queueDefaults,
        retentionPeriod: Duration.days(14),
      });
      Tags.of(deadLetterQueue).add('service:queue', deadLetterName(definition));
      acknowledge(deadLetterQueue, { 'Serverless-SQSRedrivePolicy': reasons.deadLetterQueue });
      const queue = new Queue(stack, `${queueId}Queue`, {
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
    const accessLogsBucket = new Bucket(stack, 'AccessLogsBucket', {
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
    const bucketKey = new Key(stack, 'BucketsKey', {
      description: 'Encrypts the objects of the service buckets (exports)',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const buckets = new Map<BucketName, Bucket>();
    // Attachments: a bucket of their own (browser PUTs, SSE-S3, optional malware scan).
    const uploadCorsOrigins = new CfnParameter(stack, 'UploadCorsOrigins', {
      type: 'CommaDelimitedList',
      default: '*',
      description:
        'Origins browsers may PUT attachments from (the sites embedding the widget), comma-separated; * allows any page holding a presigned URL',
    });
    const malwareScan = new CfnParameter(stack, 'MalwareScan', {
      type: 'String',
      default: 'false',
      allowedValues: ['true', 'false'],
      description:
        'true: GuardDuty Malware Protection for S3 scans every attachment; a flagged file is rejected and never served',
    });
    const malwareScanEnabled = new CfnCondition(stack, 'MalwareScanEnabled', {
      expression: Fn.conditionEquals(malwareScan.valueAsString, 'true'),
    });
    for (const definition of bucketDefinitions) {
      if (definition.name === 'uploads') {
        const scanResults = queues.get('malware-scan-results');
        if (!scanResults) throw new Error('No malware-scan-results queue');
        const uploads = new UploadsBucket(stack, 'Uploads', {
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
      const bucket = new Bucket(stack, `${pascal(definition.name)}Bucket`, {
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

    this.table = table;
    this.logsKey = logsKey;
    this.searchIndex = searchIndex;
    this.queues = queues;
    this.buckets = buckets;
    this.deadLetterQueues = deadLetterQueues;
    this.dashboardQueues = dashboardQueues;
    this.logGroup = logGroup;
  }
}
