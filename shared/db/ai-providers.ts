import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '../clock';
import { uuidv7 } from '../ids';
import type { AiProvider } from '../schemas/ai-provider';
import { aiProviderProjection } from '../schemas/projections';
import { openSealed, seal } from '../webhooks/secret-box';
import { db, tableName } from './client';
import { keys } from './keys';
import { type AuditBy, orgAudit, systemActor } from './org-audit';
import { project } from './project';
import { queryPrefix } from './query';
import { transact } from './transaction';
import { updateExisting } from './update';

export type { AiProvider };

/**
 * Platform-wide AI providers (`PLATFORM#AI_PROVIDERS`/`PROVIDER#<id>`). The API key is sealed like
 * a webhook secret (KMS in AWS under AI_PROVIDER_KEYS_KMS_KEY_ID with the provider's id as
 * encryption context, so a sealed key copied onto another provider's row does not open; AES-256-GCM
 * locally) and never leaves this module but through `openKey`, for the probe.
 */
interface StoredAiProvider extends AiProvider {
  apiKeySealed: string | null;
}

const sealingKey = (providerId: string) => ({
  kmsKeyId: process.env.AI_PROVIDER_KEYS_KMS_KEY_ID || undefined,
  context: { aiProviderId: providerId },
});

const toProvider = project<AiProvider>(aiProviderProjection);

/**
 * How long an instance trusts what it read of the providers for `anyAiProviderEnabled` (the chatbot's
 * `providerAvailable`): the list is platform-wide and rarely changes. A change made through this
 * instance clears it at once; other instances see it within this long.
 */
export const PROVIDERS_CACHE_TTL_MS = 10_000;
let enabledCache: { value: boolean; expiresAtMs: number } | undefined;
const forgetEnabled = () => {
  enabledCache = undefined;
};

const storedOf = (item: Record<string, unknown>): StoredAiProvider => ({
  ...toProvider(item),
  apiKeySealed: (item.apiKeySealed as string | null | undefined) ?? null,
});

/** The key's visible part: its last four characters (all of a very short key shows nothing). */
const last4 = (apiKey: string): string | null => (apiKey.length >= 8 ? apiKey.slice(-4) : null);

async function keyFields(providerId: string, apiKey: string) {
  return {
    apiKeySealed: await seal(apiKey, sealingKey(providerId)),
    hasApiKey: true,
    apiKeyLast4: last4(apiKey),
  };
}

export interface NewAiProvider {
  name: string;
  kind: AiProvider['kind'];
  baseUrl: string;
  model: string;
  enabled: boolean;
  apiKey?: string | undefined;
}

/** Every provider (a handful, platform-wide): one Query, oldest first. */
async function allProviders(options: { consistent?: boolean } = {}): Promise<AiProvider[]> {
  const items = await queryPrefix(keys.aiProvidersPartition, keys.aiProviderPrefix, options);
  return items.map(toProvider);
}

/**
 * Whether an enabled provider exists: one Query of the (small) partition, remembered by this
 * instance for PROVIDERS_CACHE_TTL_MS. Outside `aiProviders` so that the chatbot's bundle, which
 * needs only this, holds none of the sealing and opening of keys (KMS) the object brings along
 * (test/infra/iam-needs.checks.ts derives each function's permissions from its bundle).
 */
export async function anyAiProviderEnabled(): Promise<boolean> {
  const now = clock.nowMs();
  if (enabledCache && enabledCache.expiresAtMs > now) return enabledCache.value;
  const value = (await allProviders()).some((provider) => provider.enabled);
  enabledCache = { value, expiresAtMs: now + PROVIDERS_CACHE_TTL_MS };
  return value;
}

/** AI providers belong to no organization: their entries go to the platform's own audit log. */
const providerAudit = (type: string, id: string, by: AuditBy, details?: Record<string, unknown>) =>
  orgAudit.write(null, { ...by, type, target: { type: 'ai_provider', id }, ...(details ? { details } : {}) });

export const aiProviders = {
  toProvider,

  async create(input: NewAiProvider, by: AuditBy = systemActor): Promise<AiProvider> {
    const id = uuidv7();
    const now = clock.nowIso();
    const { apiKey, ...fields } = input;
    const stored: StoredAiProvider = {
      id,
      ...fields,
      hasApiKey: false,
      apiKeyLast4: null,
      apiKeySealed: null,
      createdAt: now,
      updatedAt: now,
      ...(apiKey ? await keyFields(id, apiKey) : {}),
    };
    await transact([
      {
        Put: {
          TableName: tableName,
          Item: { ...keys.aiProvider(id), entity: 'aiProvider', ...stored },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      providerAudit('ai_provider.created', id, by, { name: stored.name, kind: stored.kind }),
    ]);
    forgetEnabled();
    return toProvider(stored);
  },

  all: allProviders,

  /** Test hook: forget what `anyAiProviderEnabled` remembers. */
  forgetCache: forgetEnabled,

  async get(providerId: string): Promise<StoredAiProvider | undefined> {
    const { Item } = await db.send(
      new GetCommand({ TableName: tableName, Key: keys.aiProvider(providerId), ConsistentRead: true }),
    );
    return Item ? storedOf(Item) : undefined;
  },

  /**
   * Writes the fields given; an omitted or empty `apiKey` leaves the stored key as it is. One
   * UpdateItem (`attribute_exists`); undefined when there is no such provider.
   */
  async update(
    providerId: string,
    changes: Partial<Omit<NewAiProvider, 'apiKey'>> & { apiKey?: string | undefined },
    by: AuditBy = systemActor,
  ): Promise<AiProvider | undefined> {
    const { apiKey, ...fields } = changes;
    const changed = Object.keys(fields).filter((name) => fields[name as keyof typeof fields] !== undefined);
    const updated = await updateExisting(
      keys.aiProvider(providerId),
      { ...fields, ...(apiKey ? await keyFields(providerId, apiKey) : {}) },
      [
        providerAudit('ai_provider.updated', providerId, by, {
          changed: apiKey ? [...changed, 'apiKey'] : changed,
        }),
      ],
    );
    forgetEnabled();
    return updated ? toProvider(updated) : undefined;
  },

  /** Idempotent: deleting a provider that is not there is not an error. */
  async remove(providerId: string, by: AuditBy = systemActor): Promise<void> {
    await transact([
      { Delete: { TableName: tableName, Key: keys.aiProvider(providerId) } },
      providerAudit('ai_provider.deleted', providerId, by),
    ]);
    forgetEnabled();
  },

  /** The plaintext key, for the probe only; null when none is stored. */
  async openKey(provider: StoredAiProvider): Promise<string | null> {
    return provider.apiKeySealed ? openSealed(provider.apiKeySealed, sealingKey(provider.id)) : null;
  },
};
