import { Aws, type CfnCondition, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { CfnRule } from 'aws-cdk-lib/aws-events';
import { CfnMalwareProtectionPlan } from 'aws-cdk-lib/aws-guardduty';
import { type CfnRole, PolicyDocument, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type CfnBucket,
  HttpMethods,
  type IBucket,
  ObjectOwnership,
} from 'aws-cdk-lib/aws-s3';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { BucketDefinition } from '../../shared/resources';
import { acknowledge } from '../nag';

export interface UploadsBucketProps {
  definition: BucketDefinition;
  accessLogs: IBucket;
  /** Origins browsers may PUT from (and GET with CORS): the sites that embed the widget, or `*`. */
  corsOrigins: string[];
  /** GuardDuty Malware Protection for S3 is deployed only under this condition (a stack parameter). */
  malwareScan: CfnCondition;
  /** Where EventBridge sends the scan results (the malware-scan-result worker reads it). */
  scanResults: Queue;
}

/** The prefix GuardDuty scans: checked files only, each once (pending objects are not served). */
const SCANNED_PREFIX = 'files/';

/**
 * The attachments bucket, apart from the export bucket: clients write to it straight from browsers
 * (presigned PUTs, so CORS), and what it holds is customer content of unknown kind (so an optional
 * malware scan). Never public: every read and write is a URL the service signed.
 *
 * Encryption: SSE-S3, decided. Objects are only ever reached through presigned URLs the service
 * signs, so a customer key would add no separation of duties (the signing roles would need
 * kms:Decrypt and kms:GenerateDataKey on it anyway); what it would add is a key grant for
 * GuardDuty's scanning role, KMS request costs on every browser PUT and GET, and a failure mode
 * where a key policy change breaks every download link. Access control is the bucket's IAM.
 */
export class UploadsBucket extends Construct {
  readonly bucket: Bucket;

  constructor(scope: Construct, id: string, props: UploadsBucketProps) {
    super(scope, id);
    const { definition } = props;
    this.bucket = new Bucket(this, 'Bucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: BucketEncryption.S3_MANAGED,
      // No ACLs: the bucket owner owns every object, whoever signed its PUT.
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // Off, decided: a deleted message's or purged conversation's files must be gone, not kept as versions.
      versioned: false,
      serverAccessLogsBucket: props.accessLogs,
      serverAccessLogsPrefix: `${definition.name}/`,
      // Browsers PUT the bytes and may GET them with CORS. Bucket CORS is one list for the whole
      // bucket, not per organization (and at most 100 rules): the origins are a stack parameter.
      // The presigned URL, not the origin, is what authorizes; CORS only decides which pages may
      // read the answer. Only the signed header is allowed, and no credentials are ever included.
      cors: [
        {
          allowedMethods: [HttpMethods.PUT, HttpMethods.GET, HttpMethods.HEAD],
          allowedOrigins: props.corsOrigins,
          allowedHeaders: ['content-type'],
          exposedHeaders: ['etag'],
          maxAge: 3000,
        },
      ],
      // S3 lifecycle counts whole days: an upload never completed (under pending/) goes after one
      // day; the hour itself is the record's (shared/db/uploads.ts: TTL and read-time check), and a
      // completed one is moved under files/ and its pending copy deleted at once.
      lifecycleRules: [
        {
          id: 'expire-pending-uploads',
          prefix: definition.expirePrefix,
          expiration: Duration.days(definition.expireAfterDays),
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
      ],
      autoDeleteObjects: false,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.scanWithGuardDuty(props);
  }

  /**
   * GuardDuty Malware Protection for S3 on `files/`: it scans each new object and sends its result
   * to EventBridge; a rule forwards results of this bucket to the worker's queue (a queue, so no
   * finding is dropped while the worker fails). A flagged file is rejected and deleted.
   */
  private scanWithGuardDuty(props: UploadsBucketProps): void {
    const stack = Stack.of(this);
    const bucket = this.bucket;
    const role = new Role(this, 'MalwareScanRole', {
      assumedBy: new ServicePrincipal('malware-protection-plan.guardduty.amazonaws.com'),
      description: 'GuardDuty Malware Protection for S3: reads and tags the uploads it scans',
      inlinePolicies: {
        scan: new PolicyDocument({
          statements: [
            new PolicyStatement({
              sid: 'ManageItsOwnEventBridgeRule',
              actions: [
                'events:PutRule',
                'events:DeleteRule',
                'events:PutTargets',
                'events:RemoveTargets',
                'events:DescribeRule',
                'events:ListTargetsByRule',
              ],
              resources: [
                `arn:${Aws.PARTITION}:events:${Aws.REGION}:${Aws.ACCOUNT_ID}:rule/DO-NOT-DELETE-AmazonGuardDutyMalwareProtectionS3*`,
              ],
              conditions: {
                StringLike: { 'events:ManagedBy': 'malware-protection-plan.guardduty.amazonaws.com' },
              },
            }),
            new PolicyStatement({
              sid: 'ReadAndTagScannedObjects',
              actions: ['s3:GetObject', 's3:GetObjectVersion', 's3:PutObjectTagging', 's3:GetObjectTagging'],
              resources: [bucket.arnForObjects(`${SCANNED_PREFIX}*`)],
            }),
            new PolicyStatement({
              sid: 'ValidateAccessWithItsTestObject',
              actions: ['s3:PutObject'],
              resources: [bucket.arnForObjects('malware-protection-resource-validation-object')],
            }),
            new PolicyStatement({
              sid: 'ListenToNewObjects',
              actions: ['s3:ListBucket', 's3:GetBucketNotification', 's3:PutBucketNotification'],
              resources: [bucket.bucketArn],
            }),
          ],
        }),
      },
    });
    (role.node.defaultChild as CfnRole).cfnOptions.condition = props.malwareScan;
    acknowledge(role, {
      'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:events:<AWS::Region>:<AWS::AccountId>:rule/DO-NOT-DELETE-AmazonGuardDutyMalwareProtectionS3*]':
        'GuardDuty names the EventBridge rule it manages itself, under this documented prefix; the condition restricts it to rules managed by the malware protection plan.',
      [`AwsSolutions-IAM5[Resource::<${stack.getLogicalId(bucket.node.defaultChild as CfnBucket)}.Arn>/${SCANNED_PREFIX}*]`]:
        'The scanner reads and tags whichever checked file was just written; objects are named at run time under files/.',
    });

    const plan = new CfnMalwareProtectionPlan(this, 'MalwareProtectionPlan', {
      role: role.roleArn,
      protectedResource: {
        s3Bucket: { bucketName: bucket.bucketName, objectPrefixes: [SCANNED_PREFIX] },
      },
      actions: { tagging: { status: 'ENABLED' } },
    });
    plan.cfnOptions.condition = props.malwareScan;

    // Named, so the queue's policy can name the rule without depending on it (it exists only
    // under the condition, the queue and its policy always).
    const ruleName = `${stack.stackName}-malware-scan-results`;
    const rule = new CfnRule(this, 'ScanResultsRule', {
      name: ruleName,
      description: 'GuardDuty malware scan results of the uploads bucket, to the worker queue',
      eventPattern: {
        source: ['aws.guardduty'],
        'detail-type': ['GuardDuty Malware Protection Object Scan Result'],
        detail: { s3ObjectDetails: { bucketName: [bucket.bucketName] } },
      },
      targets: [{ id: 'scan-results-queue', arn: props.scanResults.queueArn }],
    });
    rule.cfnOptions.condition = props.malwareScan;
    acknowledge(rule, {
      'Serverless-EventBusDLQ':
        'The target is itself a durable queue with a dead-letter queue (alarmed); EventBridge retries delivery to it for 24 h, so a target DLQ would only hold results SQS refused for a whole day.',
    });
    props.scanResults.addToResourcePolicy(
      new PolicyStatement({
        sid: 'GuardDutyScanResultsFromEventBridge',
        principals: [new ServicePrincipal('events.amazonaws.com')],
        actions: ['sqs:SendMessage'],
        resources: [props.scanResults.queueArn],
        conditions: {
          ArnEquals: {
            'aws:SourceArn': `arn:${Aws.PARTITION}:events:${Aws.REGION}:${Aws.ACCOUNT_ID}:rule/${ruleName}`,
          },
        },
      }),
    );
  }
}
