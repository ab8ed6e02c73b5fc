/**
 * The IAM actions each AWS call the service's code makes is authorized as (AWS's Service
 * Authorization Reference), keyed by what the code constructs: an SDK command class, lib-storage's
 * `Upload`, or `getSecretString` (shared/secrets.ts: GetSecretValue through the secrets extension). A call that is
 * not listed here fails test/infra/iam-needs.test.ts, which derives every function's permissions
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

  GetObjectCommand: { actions: ['s3:GetObject'], bucketKeyActions: ['kms:Decrypt'] },
  PutObjectCommand: { actions: ['s3:PutObject'], bucketKeyActions: ['kms:GenerateDataKey'] },
  // HEAD is authorized as GetObject; a copy reads its source and writes its destination.
  HeadObjectCommand: { actions: ['s3:GetObject'], bucketKeyActions: ['kms:Decrypt'] },
  CopyObjectCommand: {
    actions: ['s3:GetObject', 's3:PutObject'],
    bucketKeyActions: ['kms:Decrypt', 'kms:GenerateDataKey'],
  },
  DeleteObjectCommand: { actions: ['s3:DeleteObject'] },
  // lib-storage: PutObject, or CreateMultipartUpload/UploadPart/CompleteMultipartUpload (all
  // authorized as PutObject), and AbortMultipartUpload when a part fails. Completing a multipart
  // upload under a KMS key decrypts the data key again.
  Upload: {
    actions: ['s3:PutObject', 's3:AbortMultipartUpload'],
    bucketKeyActions: ['kms:GenerateDataKey', 'kms:Decrypt'],
  },

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
