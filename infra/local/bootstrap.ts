import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createTableInput } from '../../shared/db/table';
import { bucketDefinitions, deadLetterName, queueDefinitions } from '../../shared/resources';

/**
 * Creates, where missing, the table, queues (with their dead-letter queues) and buckets from the
 * same definitions CDK deploys. Safe to run against emulators that already hold them.
 */
export async function createTable(endpoint: string, tableName: string): Promise<void> {
  const client = new DynamoDBClient({ endpoint });
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
    await client.send(new CreateTableCommand(createTableInput(tableName)));
  }
  client.destroy();
}

export interface CreatedQueues {
  /** Queue URLs under the environment variables functions read. */
  env: Record<string, string>;
  byName: Map<string, { url: string; arn: string }>;
}

export async function createQueues(endpoint: string, prefix: string): Promise<CreatedQueues> {
  // fauxqs answers with queue URLs on a host that does not resolve: keep using the endpoint.
  const client = new SQSClient({ endpoint, useQueueUrlAsEndpoint: false });
  const env: Record<string, string> = {};
  const byName = new Map<string, { url: string; arn: string }>();
  for (const queue of queueDefinitions) {
    const dlq = await client.send(
      new CreateQueueCommand({ QueueName: `${prefix}-${deadLetterName(queue)}` }),
    );
    const { Attributes } = await client.send(
      new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    const created = await client.send(
      new CreateQueueCommand({
        QueueName: `${prefix}-${queue.name}`,
        Attributes: {
          VisibilityTimeout: String(queue.visibilityTimeoutSeconds),
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: Attributes?.QueueArn,
            maxReceiveCount: queue.maxReceiveCount,
          }),
        },
      }),
    );
    if (!created.QueueUrl) throw new Error(`queue ${queue.name} was not created`);
    const arn = await client.send(
      new GetQueueAttributesCommand({ QueueUrl: created.QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    env[queue.envVar] = created.QueueUrl;
    byName.set(queue.name, { url: created.QueueUrl, arn: arn.Attributes?.QueueArn ?? '' });
  }
  client.destroy();
  return { env, byName };
}

export async function streamArnOf(endpoint: string, tableName: string): Promise<string> {
  const client = new DynamoDBClient({ endpoint });
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  client.destroy();
  if (!Table?.LatestStreamArn) throw new Error(`table ${tableName} has no stream`);
  return Table.LatestStreamArn;
}

export async function createBuckets(endpoint: string, prefix: string): Promise<Record<string, string>> {
  const client = new S3Client({ endpoint, forcePathStyle: true });
  const env: Record<string, string> = {};
  for (const bucket of bucketDefinitions) {
    const name = `${prefix}-${bucket.name}`;
    try {
      await client.send(new HeadBucketCommand({ Bucket: name }));
    } catch {
      await client.send(new CreateBucketCommand({ Bucket: name }));
    }
    env[bucket.envVar] = name;
  }
  client.destroy();
  return env;
}
