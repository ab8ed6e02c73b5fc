import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mintOrgToken } from '../auth/tokens';
import { chatbotConfigOf, defaultChatbotConfig } from '../chatbot/config';
import { clock } from '../clock';
import { uuidv7 } from '../ids';
import type { ChatbotConfig } from '../schemas/chatbot';
import type { Organization } from '../schemas/organization';
import { organizationProjection } from '../schemas/projections';
import { batchGet } from './batch';
import { db, tableName } from './client';
import { keys } from './keys';
import { type AuditBy, orgAudit, systemActor } from './org-audit';
import { project } from './project';
import { queryAll } from './query';
import { updateExisting } from './update';

export type { Organization };

export interface NewOrganization {
  name: string;
  modules: string[];
  locales: string[];
  defaultLocale: string;
  historyWindowDays: number | null;
}

/**
 * The stored chatbot configuration is read through `chatbotConfigOf`, which fills what it lacks; an
 * organization stored before `rateLimitPerMinute` existed has no ceiling (null).
 */
const projectOrganization = project<Omit<Organization, 'chatbot'> & { chatbot: unknown }>(
  organizationProjection,
);

const fromItem = (item: Record<string, unknown>): Organization => {
  const organization = projectOrganization(item);
  organization.chatbot = chatbotConfigOf(item.chatbot, String(item.createdAt));
  organization.rateLimitPerMinute ??= null;
  return organization as Organization;
};

export const organizations = {
  /** Every organization's id, oldest first: the keys of the platform-wide index (pages followed). */
  async allIds(): Promise<string[]> {
    const entries = await queryAll({
      TableName: tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.organizationListing('', '').gsi1pk },
    });
    return entries.flatMap((entry) => keys.parseOrganization(String(entry.pk)) ?? []);
  },

  /** The names of organizations by id (one BatchGetItem per 100, only the name read). */
  async names(orgIds: readonly string[]): Promise<Map<string, string>> {
    const items = await batchGet(
      orgIds.map((id) => keys.organization(id)),
      { consistent: false, projection: ['pk', 'name'] },
    );
    return new Map(items.map((item) => [keys.parseOrganization(String(item.pk)) ?? '', String(item.name)]));
  },

  async create(input: NewOrganization): Promise<Organization> {
    const id = uuidv7();
    const now = clock.nowIso();
    const organization: Organization = {
      id,
      ...input,
      rateLimitPerMinute: null,
      widgetKey: mintOrgToken('widgetKey', id).token,
      chatbot: defaultChatbotConfig(now),
      createdAt: now,
      updatedAt: now,
    };
    await db.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...keys.organization(id),
          ...keys.organizationListing(now, id),
          entity: 'organization',
          ...organization,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return organization;
  },

  /**
   * Strongly consistent unless asked otherwise: a read by id shows a write at once (the admin's
   * GET or PATCH right after the create, a widget key used the moment its organization exists).
   */
  async get(orgId: string, options: { consistent?: boolean } = {}): Promise<Organization | undefined> {
    const { Item } = await db.send(
      new GetCommand({
        TableName: tableName,
        Key: keys.organization(orgId),
        ConsistentRead: options.consistent ?? true,
      }),
    );
    return Item ? fromItem(Item) : undefined;
  },

  /**
   * Replaces the chatbot configuration with its audit entry (one transaction, then a consistent read
   * of the organization); undefined when the organization is gone.
   */
  async setChatbot(
    orgId: string,
    chatbot: ChatbotConfig,
    by: AuditBy = systemActor,
  ): Promise<Organization | undefined> {
    const updated = await updateExisting(keys.organization(orgId), { chatbot }, [
      orgAudit.write(orgId, {
        ...by,
        type: 'chatbot.config_updated',
        target: { type: 'chatbot_config', id: orgId },
        details: { enabled: chatbot.enabled, rules: chatbot.rules.length },
      }),
    ]);
    return updated ? fromItem(updated) : undefined;
  },

  fromItem,

  /** Writes only the given fields; `undefined` when the organization does not exist. */
  async update(
    orgId: string,
    changes: Partial<Omit<Organization, 'id' | 'widgetKey' | 'createdAt' | 'updatedAt'>>,
  ) {
    const updated = await updateExisting(keys.organization(orgId), changes);
    return updated ? fromItem(updated) : undefined;
  },
};
