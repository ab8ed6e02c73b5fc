import type { BatchGetCommandInput, BatchGetCommandOutput } from '@aws-sdk/lib-dynamodb';
import { mintOrgToken } from '../../../shared/auth/tokens';
import { keys } from '../../../shared/db/keys';
import { uuidv7 } from '../../../shared/ids';

type Item = Record<string, unknown>;

export function organizationItem(orgId: string, modules: string[] = ['automation_api']): Item {
  return {
    ...keys.organization(orgId),
    entity: 'organization',
    id: orgId,
    name: 'Acme',
    modules,
    locales: ['en'],
    defaultLocale: 'en',
    historyWindowDays: null,
    widgetKey: mintOrgToken('widgetKey', orgId).token,
    chatbot: {
      enabled: false,
      schedule: null,
      knowledgeThreshold: 0.35,
      rules: [],
      intentPolicies: [],
      updatedAt: '2026-11-01T08:00:00.000Z',
    },
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
  };
}

export interface ApiKeyFixture {
  orgId: string;
  token: string;
  credentialId: string;
  item: Item;
}

/** A freshly minted API key (new credential id, so the per-credential rate-limit lease is fresh too). */
export function apiKeyFixture(
  options: { orgId?: string; scopes?: string[]; revokedAt?: string | null } = {},
): ApiKeyFixture {
  const orgId = options.orgId ?? uuidv7();
  const minted = mintOrgToken('apiKey', orgId);
  return {
    orgId,
    token: minted.token,
    credentialId: minted.credentialId,
    item: {
      ...keys.apiKey(orgId, minted.credentialId),
      entity: 'apiKey',
      kind: 'apiKey',
      id: minted.credentialId,
      orgId,
      hash: minted.hash,
      scopes: options.scopes ?? [],
      revokedAt: options.revokedAt ?? null,
      name: 'unit',
      createdAt: '2026-01-01T00:00:00.000Z',
    },
  };
}

/**
 * A BatchGetItem answer computed from a small in-memory table: only the items whose keys were asked
 * for come back, so a lookup by the wrong key finds nothing, as it would in DynamoDB.
 */
export function batchGetFrom(items: readonly Item[]) {
  return (input: BatchGetCommandInput): BatchGetCommandOutput => {
    const Responses: Record<string, Item[]> = {};
    for (const [table, request] of Object.entries(input.RequestItems ?? {})) {
      Responses[table] = (request.Keys ?? []).flatMap((key) =>
        items.filter((item) => item.pk === key.pk && item.sk === key.sk),
      );
    }
    return { Responses, $metadata: {} };
  };
}
