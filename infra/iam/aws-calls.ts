/**
 * The IAM actions each AWS call the service's code makes is authorized as (AWS's Service
 * Authorization Reference), keyed by what the code constructs: an SDK command class, lib-storage's
 * `Upload`, or `getSecretString` (shared/secrets.ts: GetSecretValue through the secrets extension). A call that is
 * not listed here fails test/infra/iam-needs.checks.ts, which derives every function's permissions
 * from the calls its bundle holds; a local check of commands against a function's role can read
 * the same table. No aws-cdk-lib here: the table is plain data.
 */
export interface AwsCall {
  /** Actions on the resource the call names. */
  actions: readonly string[];
  /** On an SSE-KMS bucket, what the caller needs besides on the bucket's key. */
  bucketKeyActions?: readonly string[];
}

const dynamodb = (...actions: string[]): AwsCall => ({ actions: actions.map((a) => `dynamodb:${a}`) });
const sqs = (action: string): AwsCall => ({ actions: [`sqs:${action}`] });
const secrets = (action: string): AwsCall => ({ actions: [`secretsmanager:${action}`] });

/**
 * What S3 authorizes each operation the service sends as: one action on the object (or, for a
 * listing, the bucket), plus what S3 asks KMS for on the caller's behalf under an SSE-KMS bucket.
 * The one S3 table: the SDK commands below and the local enforcement (infra/local/iam/checks.ts)
 * both read it. A copy is a read of its source and a write of its destination (no s3:CopyObject action).
 */
export const s3Operations = {
  GetObject: { action: 's3:GetObject', bucketKeyActions: ['kms:Decrypt'] },
  // HEAD is authorized as GetObject.
  HeadObject: { action: 's3:GetObject', bucketKeyActions: ['kms:Decrypt'] },
  PutObject: { action: 's3:PutObject', bucketKeyActions: ['kms:GenerateDataKey'] },
  // A multipart upload's steps are authorized as PutObject; completing one under a KMS key
  // decrypts the data key again.
  CreateMultipartUpload: { action: 's3:PutObject', bucketKeyActions: ['kms:GenerateDataKey'] },
  UploadPart: { action: 's3:PutObject' },
  CompleteMultipartUpload: { action: 's3:PutObject', bucketKeyActions: ['kms:Decrypt'] },
  AbortMultipartUpload: { action: 's3:AbortMultipartUpload' },
  DeleteObject: { action: 's3:DeleteObject' },
  ListObjectsV2: { action: 's3:ListBucket', onBucket: true },
} as const satisfies Readonly<
  Record<string, { action: string; bucketKeyActions?: readonly string[]; onBucket?: boolean }>
>;
export type S3Operation = keyof typeof s3Operations;

/** The actions of S3 operations sent together (a copy, lib-storage's `Upload`), each once. */
const s3 = (...operations: S3Operation[]): AwsCall => {
  const entries = operations.map((operation) => s3Operations[operation]);
  const unique = (values: readonly string[]) => [...new Set(values)];
  const bucketKeyActions = unique(
    entries.flatMap((entry) => ('bucketKeyActions' in entry ? entry.bucketKeyActions : [])),
  );
  return {
    actions: unique(entries.map((entry) => entry.action)),
    ...(bucketKeyActions.length > 0 && { bucketKeyActions }),
  };
};

export const awsCalls: Readonly<Record<string, AwsCall>> = {
  // @aws-sdk/lib-dynamodb's document commands, and the client-dynamodb commands they send.
  GetCommand: dynamodb('GetItem'),
  GetItemCommand: dynamodb('GetItem'),
  PutCommand: dynamodb('PutItem'),
  PutItemCommand: dynamodb('PutItem'),
  UpdateCommand: dynamodb('UpdateItem'),
  UpdateItemCommand: dynamodb('UpdateItem'),
  DeleteCommand: dynamodb('DeleteItem'),
  DeleteItemCommand: dynamodb('DeleteItem'),
  QueryCommand: dynamodb('Query'),
  ScanCommand: dynamodb('Scan'),
  BatchGetCommand: dynamodb('BatchGetItem'),
  BatchGetItemCommand: dynamodb('BatchGetItem'),
  BatchWriteCommand: dynamodb('BatchWriteItem'),
  BatchWriteItemCommand: dynamodb('BatchWriteItem'),
  TransactGetCommand: dynamodb('GetItem'),
  TransactGetItemsCommand: dynamodb('GetItem'),
  // Authorized item by item, as the action each item is: any of these, whatever the items hold.
  TransactWriteCommand: dynamodb('PutItem', 'UpdateItem', 'DeleteItem', 'ConditionCheckItem'),
  TransactWriteItemsCommand: dynamodb('PutItem', 'UpdateItem', 'DeleteItem', 'ConditionCheckItem'),

  SendMessageCommand: sqs('SendMessage'),
  // A batch is authorized as SendMessage (and ChangeMessageVisibilityBatch as its single form).
  SendMessageBatchCommand: sqs('SendMessage'),
  ChangeMessageVisibilityCommand: sqs('ChangeMessageVisibility'),
  ChangeMessageVisibilityBatchCommand: sqs('ChangeMessageVisibility'),

  GetObjectCommand: s3('GetObject'),
  PutObjectCommand: s3('PutObject'),
  HeadObjectCommand: s3('HeadObject'),
  CopyObjectCommand: s3('GetObject', 'PutObject'),
  DeleteObjectCommand: s3('DeleteObject'),
  // lib-storage: PutObject, or a multipart upload, aborted when a part fails.
  Upload: s3(
    'PutObject',
    'CreateMultipartUpload',
    'UploadPart',
    'CompleteMultipartUpload',
    'AbortMultipartUpload',
  ),

  EncryptCommand: { actions: ['kms:Encrypt'] },
  DecryptCommand: { actions: ['kms:Decrypt'] },

  SendEmailCommand: { actions: ['ses:SendEmail'] },

  PostToConnectionCommand: { actions: ['execute-api:ManageConnections'] },
  DeleteConnectionCommand: { actions: ['execute-api:ManageConnections'] },
  GetConnectionCommand: { actions: ['execute-api:ManageConnections'] },

  getSecretString: secrets('GetSecretValue'),
  GetSecretValueCommand: secrets('GetSecretValue'),
  DescribeSecretCommand: secrets('DescribeSecret'),
  PutSecretValueCommand: secrets('PutSecretValue'),
  UpdateSecretVersionStageCommand: secrets('UpdateSecretVersionStage'),
};

/** The service an action belongs to: `dynamodb`, `sqs`, `s3`, `kms`, … */
export const serviceOf = (action: string): string => action.slice(0, action.indexOf(':'));
