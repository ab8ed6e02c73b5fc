import type { OperatorRole } from './caller';

/** Every scope an API key may carry. A key created with none is unrestricted. */
export const scopes = [
  'conversations:read',
  'conversations:write',
  'operator-teams:read',
  'operator-teams:write',
  'export:read',
  'export:write',
  'custom-fields:read',
  'custom-fields:write',
  'knowledge-base:read',
  'knowledge-base:write',
  'surveys:read',
  'surveys:write',
  'webhooks:read',
  'webhooks:write',
  'chatbot:read',
  'integrations:read',
  'integrations:write',
  'chatbot:write',
  'visitors:read',
  'visitors:write',
  'audit:read',
  'usage:read',
] as const;

export type Scope = (typeof scopes)[number];

/**
 * Operator sessions carry every scope; what separates the roles is the admin-only flag of a route,
 * so both roles list the same scopes and `adminOnly` does the rest.
 */
export const roleScopes: Record<OperatorRole, readonly Scope[]> = { admin: scopes, operator: scopes };
