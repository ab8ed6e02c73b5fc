import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import { uuidv7 } from '../ids';
import { webhookProjection } from '../schemas/projections';
import type { Webhook } from '../schemas/webhook';
import { openSecret, sealSecret } from '../webhooks/secret-box';
import { batchGet } from './batch';
import { db, tableName } from './client';
import { keys } from './keys';
import { type AuditBy, orgAudit } from './org-audit';
import { project } from './project';
import { queryPrefix } from './query';
import { transact, transactUnlessConditionFails } from './transaction';
import { updateExisting } from './update';

export type { Webhook };

/** After a rotation the previous secret keeps signing beside the new one this long. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

/** The webhook as the API shows it (the schema's fields, by a projection without zod). */
const toWebhook = project<Webhook>(webhookProjection);

export interface StoredWebhook extends Webhook {
  secretSealed: string;
  previousSecretSealed: string | null;
  previousSecretExpiresAt: string | null;
}

function storedOf(item: Record<string, unknown>): StoredWebhook {
  return {
    ...toWebhook(item),
    secretSealed: String(item.secretSealed),
    previousSecretSealed: (item.previousSecretSealed as string | null | undefined) ?? null,
    previousSecretExpiresAt: (item.previousSecretExpiresAt as string | null | undefined) ?? null,
  };
}

/** The secrets that sign right now: the current one, and the previous one during its overlap. */
export async function activeSecrets(
  orgId: string,
  webhook: StoredWebhook,
  nowIso: string = clock.nowIso(),
): Promise<string[]> {
  const secrets = [openSecret(webhook.secretSealed, orgId)];
  if (
    webhook.previousSecretSealed &&
    webhook.previousSecretExpiresAt &&
    webhook.previousSecretExpiresAt > nowIso
  ) {
    secrets.push(openSecret(webhook.previousSecretSealed, orgId));
  }
  return Promise.all(secrets);
}

/*
 * The reads the workers use stand outside `webhooks`: an object is bundled whole, and its create and
 * rotate seal secrets (KMS Encrypt), which neither the fan-out nor the delivery worker may do.
 * test/infra/iam-needs.checks.ts derives each function's permissions from what its bundle holds.
 */

/** Every webhook of the organization (a small set): one Query. */
export async function allWebhooks(
  orgId: string,
  options: { consistent?: boolean } = {},
): Promise<StoredWebhook[]> {
  const items = await queryPrefix(keys.webhooksPartition(orgId), keys.webhookPrefix, options);
  return items.map(storedOf);
}

/** Several webhooks of one organization, strongly consistent, in one BatchGetItem. */
export async function webhooksByIds(
  orgId: string,
  webhookIds: readonly string[],
): Promise<Map<string, StoredWebhook>> {
  const items = await batchGet(
    webhookIds.map((id) => keys.webhook(orgId, id)),
    { consistent: true },
  );
  return new Map(items.map((item) => [String(item.id), storedOf(item)]));
}

export const webhooks = {
  toWebhook,

  async create(
    orgId: string,
    input: { url: string; events: readonly string[]; secret: string },
    by: AuditBy,
  ): Promise<Webhook> {
    const now = clock.nowIso();
    const created: StoredWebhook = {
      id: uuidv7(),
      url: input.url,
      events: [...new Set(input.events)],
      active: true,
      createdAt: now,
      updatedAt: now,
      secretSealed: await sealSecret(input.secret, orgId),
      previousSecretSealed: null,
      previousSecretExpiresAt: null,
    };
    await transact([
      {
        Put: {
          TableName: tableName,
          Item: { ...keys.webhook(orgId, created.id), entity: 'webhook', ...created },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      orgAudit.write(orgId, {
        ...by,
        type: 'webhook.created',
        target: { type: 'webhook', id: created.id },
        details: { url: created.url, events: created.events },
      }),
    ]);
    return toWebhook(created);
  },

  async get(orgId: string, webhookId: string): Promise<StoredWebhook | undefined> {
    const { Item } = await db.send(
      new GetCommand({ TableName: tableName, Key: keys.webhook(orgId, webhookId), ConsistentRead: true }),
    );
    return Item ? storedOf(Item) : undefined;
  },

  /** Writes the given fields; undefined when there is no such webhook. */
  async update(
    orgId: string,
    webhookId: string,
    changes: Partial<Pick<Webhook, 'url' | 'events' | 'active'>>,
    by: AuditBy,
  ) {
    const details = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
    const updated = await updateExisting(keys.webhook(orgId, webhookId), changes, [
      orgAudit.write(orgId, {
        ...by,
        type: 'webhook.updated',
        target: { type: 'webhook', id: webhookId },
        details,
      }),
    ]);
    return updated ? toWebhook(updated) : undefined;
  },

  /** Deleting stops its pending deliveries at once: every attempt reads the webhook first. */
  async remove(orgId: string, webhookId: string, by: AuditBy): Promise<boolean> {
    const failed = await transactUnlessConditionFails([
      {
        Delete: {
          TableName: tableName,
          Key: keys.webhook(orgId, webhookId),
          ConditionExpression: 'attribute_exists(pk)',
        },
      },
      orgAudit.write(orgId, {
        ...by,
        type: 'webhook.deleted',
        target: { type: 'webhook', id: webhookId },
      }),
    ]);
    return failed === undefined;
  },

  /** The new secret signs from now on; the current one keeps signing beside it for 24 hours. */
  async rotate(orgId: string, webhookId: string, secret: string, by: AuditBy): Promise<boolean> {
    const current = await webhooks.get(orgId, webhookId);
    if (!current) return false;
    const sealed = await sealSecret(secret, orgId);
    // Deleted or rotated concurrently (false): the caller reads again.
    const failed = await transactUnlessConditionFails([
      {
        Update: {
          TableName: tableName,
          Key: keys.webhook(orgId, webhookId),
          UpdateExpression:
            'SET secretSealed = :next, previousSecretSealed = :previous, previousSecretExpiresAt = :until, updatedAt = :now',
          ConditionExpression: 'secretSealed = :previous',
          ExpressionAttributeValues: {
            ':next': sealed,
            ':previous': current.secretSealed,
            ':until': new Date(clock.nowMs() + ROTATION_OVERLAP_MS).toISOString(),
            ':now': clock.nowIso(),
          },
        },
      },
      orgAudit.write(orgId, {
        ...by,
        type: 'webhook.secret_rotated',
        target: { type: 'webhook', id: webhookId },
      }),
    ]);
    return failed === undefined;
  },
};
