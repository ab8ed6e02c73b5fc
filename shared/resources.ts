/**
 * Queues and buckets, described once: CDK creates them in AWS, the local stack creates them in the
 * emulator, and functions find them through the environment variable named here.
 */
export interface QueueDefinition {
  /** Logical name; the physical name is derived per stage. */
  name: string;
  envVar: string;
  visibilityTimeoutSeconds: number;
  /** Receives after which a message moves to the queue's dead-letter queue. */
  maxReceiveCount: number;
  purpose: string;
}

export interface BucketDefinition {
  name: string;
  envVar: string;
  /** Objects expire after this many days. */
  expireAfterDays: number;
  /** Only objects under this prefix expire (the others live as long as what refers to them). */
  expirePrefix?: string;
  purpose: string;
}

/**
 * What a function does with a bucket's objects, each granted as exactly its S3 actions (see
 * infra/constructs/service-function.ts): `check` reads, copies and deletes (the uploads' checks),
 * `delete` only deletes (the purge).
 */
export type BucketAccess = 'read' | 'write' | 'readWrite' | 'check' | 'delete';

export const queueDefinitions = [
  {
    name: 'webhook-deliveries',
    envVar: 'WEBHOOK_DELIVERY_QUEUE_URL',
    visibilityTimeoutSeconds: 60,
    maxReceiveCount: 5,
    purpose: 'one message per webhook delivery attempt; delays beyond 900 s are re-enqueued',
  },
  {
    name: 'conversation-purge',
    envVar: 'CONVERSATION_PURGE_QUEUE_URL',
    visibilityTimeoutSeconds: 120,
    maxReceiveCount: 5,
    purpose: 'marks the messages of soft-deleted conversations deleted, resuming from its cursor',
  },
  {
    name: 'visitor-jobs',
    envVar: 'VISITOR_JOB_QUEUE_URL',
    visibilityTimeoutSeconds: 120,
    maxReceiveCount: 5,
    purpose:
      "moves a merged visitor's conversations to its target and erases an erased visitor's data, resuming from its cursor",
  },
  {
    name: 'pdf-jobs',
    envVar: 'PDF_JOB_QUEUE_URL',
    visibilityTimeoutSeconds: 300,
    maxReceiveCount: 3,
    purpose: 'asynchronous PDF transcript rendering',
  },
  {
    name: 'discord-notifications',
    envVar: 'DISCORD_NOTIFICATION_QUEUE_URL',
    visibilityTimeoutSeconds: 60,
    // One receive per attempt: DISCORD_RETRY_SCHEDULE's 5 delays mean 6 attempts, then dead letters.
    maxReceiveCount: 6,
    purpose: 'one message per Discord notification; retries wait by visibility, 429s are re-enqueued',
  },
  {
    name: 'malware-scan-results',
    envVar: 'MALWARE_SCAN_RESULT_QUEUE_URL',
    visibilityTimeoutSeconds: 60,
    maxReceiveCount: 5,
    purpose:
      'GuardDuty Malware Protection for S3 scan results of the uploads bucket (EventBridge): a flagged file is rejected and deleted',
  },
] as const satisfies readonly QueueDefinition[];

export const bucketDefinitions = [
  {
    name: 'exports',
    envVar: 'EXPORT_BUCKET_NAME',
    expireAfterDays: 7,
    purpose: 'generated export files (PDF transcripts), served by presigned URL',
  },
  {
    name: 'uploads',
    envVar: 'UPLOAD_BUCKET_NAME',
    // S3 lifecycle counts whole days: pending objects (never completed) go after one; the 1 h
    // limit itself is the upload record's (its TTL and the check of its expiry on every read).
    expireAfterDays: 1,
    expirePrefix: 'pending/',
    purpose:
      'message attachments: put by clients through presigned URLs under pending/, moved under files/ once checked',
  },
] as const satisfies readonly BucketDefinition[];

export const deadLetterName = (queue: QueueDefinition): string => `${queue.name}-dlq`;
