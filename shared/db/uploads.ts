import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { OrgCaller } from '../auth/caller';
import { clock } from '../clock';
import { ValidationError } from '../errors';
import { uuidv7 } from '../ids';
import { batchGet } from './batch';
import { db, tableName, ttlSeconds } from './client';
import { keys } from './keys';
import { project } from './project';
import type { Write } from './transaction';

/** A pending upload not completed within this time is gone (404), whatever its TTL's lag. */
export const PENDING_TTL_MS = 60 * 60 * 1000;

export type UploadStatus = 'pending' | 'ready' | 'rejected';

/** What a message keeps of each of its attachments (and webhooks, the feed and exports carry). */
export interface AttachmentMetadata {
  id: string;
  filename: string;
  contentType: string;
  size: number;
  sha256: string;
}

export interface StoredUpload {
  id: string;
  orgId: string;
  filename: string;
  contentType: string;
  size: number;
  status: UploadStatus;
  sha256: string | null;
  /** `visitor:<id>`, `operator:<id>` or `apiKey:<credential id>`: who may attach it. */
  owner: string;
  createdAt: string;
  /** Where the bytes are: under `pending/` until checked, then under `files/`. */
  objectKey: string;
  /** Set when a message claims it (once). */
  conversationId: string | null;
  messageId: string | null;
}

/** Who an upload belongs to: a visitor, an operator, or an API key (not the operator it names). */
export function ownerOf(caller: OrgCaller): string {
  if (caller.kind === 'visitor') return `visitor:${caller.visitorId}`;
  if (caller.kind === 'operator') return `operator:${caller.operatorId}`;
  return `${caller.kind}:${caller.credentialId}`;
}

/** Object keys begin with the state and the organization: lifecycle rules match on the prefix. */
export const objectKeys = {
  pending: (orgId: string, uploadId: string) => `pending/${orgId}/${uploadId}`,
  file: (orgId: string, uploadId: string) => `files/${orgId}/${uploadId}`,
};

const pendingUntilMs = (upload: Pick<StoredUpload, 'createdAt'>) =>
  Date.parse(upload.createdAt) + PENDING_TTL_MS;

/** A pending upload past its hour no longer exists for anyone (DynamoDB's TTL deletes lazily). */
export const expired = (upload: Pick<StoredUpload, 'status' | 'createdAt'>, nowMs = clock.nowMs()) =>
  upload.status === 'pending' && nowMs >= pendingUntilMs(upload);

/** What the data layer reads of an upload item: its own fields, never its keys, TTL or `pendingUntil`. */
const toStored = project<StoredUpload>({
  id: 'value',
  orgId: 'value',
  filename: 'value',
  contentType: 'value',
  size: 'value',
  status: 'value',
  sha256: 'value',
  owner: 'value',
  createdAt: 'value',
  objectKey: 'value',
  conversationId: 'value',
  messageId: 'value',
});

/** Unchecked and unattached uploads store no `sha256`, `conversationId` or `messageId`: null here. */
function storedOf(item: Record<string, unknown>): StoredUpload {
  const upload = toStored(item);
  upload.sha256 ??= null;
  upload.conversationId ??= null;
  upload.messageId ??= null;
  return upload;
}

function withoutAttachment(upload: StoredUpload) {
  const { conversationId: _conversation, messageId: _message, sha256: _sha256, ...rest } = upload;
  return rest;
}

export const metadataOf = (upload: StoredUpload): AttachmentMetadata => ({
  id: upload.id,
  filename: upload.filename,
  contentType: upload.contentType,
  size: upload.size,
  sha256: upload.sha256 ?? '',
});

export const uploads = {
  async create(
    caller: OrgCaller,
    input: { filename: string; contentType: string; size: number },
  ): Promise<StoredUpload> {
    const now = clock.nowMs();
    const id = uuidv7(now);
    const upload: StoredUpload = {
      id,
      orgId: caller.orgId,
      ...input,
      status: 'pending',
      sha256: null,
      owner: ownerOf(caller),
      createdAt: new Date(now).toISOString(),
      objectKey: objectKeys.pending(caller.orgId, id),
      conversationId: null,
      messageId: null,
    };
    await db.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...keys.upload(caller.orgId, id),
          entity: 'upload',
          // Not attached: no conversationId or messageId at all (what the claim's condition reads).
          ...withoutAttachment(upload),
          // A visitor's uploads are listed for its erasure.
          ...(caller.kind === 'visitor' ? keys.visitorUploads(caller.orgId, caller.visitorId, id) : {}),
          // TTL: DynamoDB deletes it within days; reads treat it as gone from the hour on, and
          // `complete` holds only before `pendingUntil`.
          expiresAt: ttlSeconds(now + PENDING_TTL_MS),
          pendingUntil: new Date(now + PENDING_TTL_MS).toISOString(),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return upload;
  },

  /** The upload, strongly consistent; undefined when missing or pending past its hour. */
  async get(orgId: string, uploadId: string): Promise<StoredUpload | undefined> {
    const { Item } = await db.send(
      new GetCommand({ TableName: tableName, Key: keys.upload(orgId, uploadId), ConsistentRead: true }),
    );
    if (!Item) return undefined;
    const upload = storedOf(Item);
    return expired(upload) ? undefined : upload;
  },

  /** Uploads by id (one BatchGetItem), expired pending ones left out. */
  async getMany(orgId: string, uploadIds: readonly string[]): Promise<Map<string, StoredUpload>> {
    const items = await batchGet(
      [...new Set(uploadIds)].map((id) => keys.upload(orgId, id)),
      { consistent: true },
    );
    const now = clock.nowMs();
    return new Map(
      items
        .map(storedOf)
        .filter((upload) => !expired(upload, now))
        .map((upload) => [upload.id, upload]),
    );
  },

  /**
   * Pending → ready (or rejected), on the condition that it is still pending and within its hour:
   * two completes at once settle once, the second reads the first's result. Returns the state
   * after, or undefined when the hour has passed.
   */
  async settle(
    upload: StoredUpload,
    outcome: { status: 'ready'; sha256: string; objectKey: string } | { status: 'rejected' },
  ): Promise<StoredUpload | undefined> {
    const values: Record<string, unknown> = {
      ':pending': 'pending',
      ':status': outcome.status,
      ':now': clock.nowIso(),
    };
    let set = '#status = :status';
    if (outcome.status === 'ready') {
      set += ', sha256 = :sha256, objectKey = :objectKey';
      values[':sha256'] = outcome.sha256;
      values[':objectKey'] = outcome.objectKey;
    }
    try {
      const { Attributes } = await db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.upload(upload.orgId, upload.id),
          // Settled, it no longer expires: it lives as long as the message it is attached to.
          UpdateExpression: `SET ${set} REMOVE expiresAt, pendingUntil`,
          ConditionExpression: '#status = :pending AND pendingUntil > :now',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      return Attributes ? storedOf(Attributes) : undefined;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      return uploads.get(upload.orgId, upload.id);
    }
  },

  /** Marks a settled upload rejected (a malware finding after the fact); true when it changed. */
  async reject(orgId: string, uploadId: string): Promise<StoredUpload | undefined> {
    try {
      const { Attributes } = await db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.upload(orgId, uploadId),
          UpdateExpression: 'SET #status = :rejected REMOVE expiresAt',
          ConditionExpression: 'attribute_exists(pk) AND #status <> :rejected',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':rejected': 'rejected' },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return Attributes ? storedOf(Attributes) : undefined;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  },

  /** Deletes the record (its object is deleted first, by the caller). */
  async remove(orgId: string, uploadId: string): Promise<void> {
    await db.send(new DeleteCommand({ TableName: tableName, Key: keys.upload(orgId, uploadId) }));
  },

  /**
   * Transaction actions that attach each upload to a message: each holds only while the upload is
   * ready, the caller's, and attached to nothing, so two posts naming one upload cannot both
   * commit. A failed condition is 422 on `attachmentIds.<i>`.
   */
  claimWrites(
    orgId: string,
    uploadIds: readonly string[],
    owner: string,
    target: { conversationId: string; messageId: string },
  ): Write[] {
    return uploadIds.map((uploadId, i) => ({
      action: {
        Update: {
          TableName: tableName,
          Key: keys.upload(orgId, uploadId),
          UpdateExpression: 'SET conversationId = :conversation, messageId = :message',
          ConditionExpression:
            'attribute_exists(pk) AND #status = :ready AND #owner = :owner AND attribute_not_exists(messageId)',
          ExpressionAttributeNames: { '#status': 'status', '#owner': 'owner' },
          ExpressionAttributeValues: {
            ':ready': 'ready',
            ':owner': owner,
            ':conversation': target.conversationId,
            ':message': target.messageId,
          },
        },
      },
      onConditionFailed: () => notAttachable(i),
    }));
  },
};

export const notAttachable = (index: number) =>
  ValidationError.field(
    `attachmentIds.${index}`,
    'Each attachment must be a ready upload of yours that no message has yet',
  );
