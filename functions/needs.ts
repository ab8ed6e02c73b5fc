import type { BucketAccess, bucketDefinitions, queueDefinitions } from '../shared/resources';

/**
 * What a function of the service needs besides its code, in one vocabulary for both kinds of
 * function: an endpoint group (functions/routes.ts) and a worker (functions/workers.ts). CDK grants
 * exactly this and sets the matching environment (infra/stacks/parts/grants.ts, one function for
 * both), the local stack isolates each function by what the synthesized template grants it.
 */
type QueueName = (typeof queueDefinitions)[number]['name'];
type BucketName = (typeof bucketDefinitions)[number]['name'];

export interface FunctionNeeds {
  /** Reads or writes the table: CDK grants that and sets TABLE_NAME (a function that does neither gets neither). */
  table?: 'read' | 'readWrite';
  /** Queues it sends to: CDK grants exactly these and sets their URLs. */
  sendsTo?: readonly QueueName[];
  /** Buckets it reads or writes: CDK grants exactly that and sets their names. */
  buckets?: readonly (readonly [BucketName, BucketAccess])[];
  /** Webhook signing secrets under their KMS key: encrypts them (`seal`) or decrypts them (`open`). */
  webhookSecrets?: 'seal' | 'open';
  /** Seals and opens AI provider keys (their own KMS key). */
  aiProviderKeys?: boolean;
  /** Calls Discord: reads the bot token's secret. */
  discordToken?: boolean;
  /** Signs and checks pagination cursors: reads the cursor key ring's secret. */
  cursorKeys?: boolean;
  /** Sends e-mail through SES from the transcript sender (the stack's parameter). */
  email?: boolean;
  /** Reads or writes the search index (PostgreSQL): placed in its network, granted its IAM database login. */
  searchIndex?: boolean;
  /** Posts to WebSocket connections: CDK grants the Management API and sets REALTIME_ENDPOINT. */
  realtime?: boolean;
}
