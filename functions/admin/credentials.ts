import { authCache } from '../../shared/auth/authenticate';
import { config, configDefaults } from '../../shared/config';
import { credentials } from '../../shared/db/credentials';
import { operators } from '../../shared/db/operators';
import { auditActorOf } from '../../shared/db/org-audit';
import { ConflictError, NotFoundError } from '../../shared/errors';
import { created, ok, route } from '../../shared/http/route';
import { successResult, uuid } from '../../shared/schemas/common';
import { ids, operatorExample } from '../../shared/schemas/examples';
import {
  createApiKeyBody,
  createdApiKey,
  createOperatorBody,
  operator,
  sessionToken,
} from '../../shared/schemas/organization';
import * as z from '../../shared/schemas/zod';

export const createApiKey = route({
  method: 'POST',
  path: '/api/admin/organizations/{orgId}/api-keys',
  operationId: 'createApiKey',
  summary: 'Create an API key',
  description:
    'The `key` is returned only in this response; only its SHA-256 is stored. A key with no scopes is unrestricted.',
  tag: 'Provisioning',
  callers: ['platform'],
  params: z.strictObject({ orgId: uuid }),
  body: createApiKeyBody,
  response: { status: 201, schema: createdApiKey, description: 'The new key, with its secret shown once' },
  errors: [404],
  examples: {
    request: { name: 'Helpdesk sync', scopes: ['conversations:read', 'conversations:write'] },
    response: {
      id: ids.apiKey,
      name: 'Helpdesk sync',
      scopes: ['conversations:read', 'conversations:write'],
      key: 'svc_sk_3kPq9sVx2mB7nC4wE8rT1yU6iO0pA5sD7fG9hJ2kL4zX6cV8bN1mQ3wE5rT7yU9iO',
      createdAt: '2026-11-01T08:10:00.000Z',
    },
  },
  handle: async ({ caller, params, body }) => {
    const key = await credentials.createApiKey(
      params.orgId,
      { name: body.name, scopes: [...new Set(body.scopes)] },
      auditActorOf(caller),
    );
    if (!key) throw new NotFoundError('Organization not found');
    return created(key);
  },
});

export const revokeApiKey = route({
  method: 'DELETE',
  path: '/api/admin/organizations/{orgId}/api-keys/{keyId}',
  operationId: 'revokeApiKey',
  summary: 'Revoke an API key',
  description: 'The key is rejected (401) from then on. Revoking it again is 404.',
  tag: 'Provisioning',
  callers: ['platform'],
  params: z.strictObject({ orgId: uuid, keyId: uuid }),
  response: { status: 200, schema: successResult, description: 'Revoked' },
  errors: [404],
  examples: { response: { success: true } },
  handle: async ({ caller, params }) => {
    const revoked = await credentials.revokeApiKey(params.orgId, params.keyId, auditActorOf(caller));
    if (!revoked) throw new NotFoundError('API key not found');
    authCache.forgetCredential(params.keyId);
    return ok({ success: true });
  },
});

export const createOperator = route({
  method: 'POST',
  path: '/api/admin/organizations/{orgId}/operators',
  operationId: 'createOperator',
  summary: 'Create an operator',
  description: 'E-mail addresses are unique within an organization (409 otherwise).',
  tag: 'Provisioning',
  callers: ['platform'],
  params: z.strictObject({ orgId: uuid }),
  body: createOperatorBody,
  response: { status: 201, schema: operator, description: 'The new operator' },
  errors: [404, 409],
  examples: {
    request: { name: 'Grace Hopper', email: 'grace@acme.example', role: 'operator' },
    response: operatorExample,
  },
  handle: async ({ caller, params, body }) => {
    const result = await operators.create(
      params.orgId,
      { ...body, email: body.email.toLowerCase() },
      auditActorOf(caller),
    );
    if (!result.ok && result.reason === 'organization_missing')
      throw new NotFoundError('Organization not found');
    if (!result.ok)
      throw new ConflictError('An operator with this e-mail already exists', { field: 'email' });
    return created(result.operator);
  },
});

export const createOperatorSession = route({
  method: 'POST',
  path: '/api/admin/organizations/{orgId}/operators/{operatorId}/sessions',
  operationId: 'createOperatorSession',
  summary: 'Create an operator session',
  description: `Stands in for dashboard login. The session token carries the operator's role and expires after \`OPERATOR_SESSION_TTL_HOURS\` hours (default ${configDefaults.operatorSessionTtlHours}).`,
  tag: 'Provisioning',
  callers: ['platform'],
  params: z.strictObject({ orgId: uuid, operatorId: uuid }),
  response: { status: 201, schema: sessionToken, description: 'The session token, shown once' },
  errors: [404],
  examples: {
    response: {
      token: 'svc_os_7hJ2kL4zX6cV8bN1mQ3wE5rT7yU9iO3kPq9sVx2mB7nC4wE8rT1yU6iO0pA5sD7fG9',
      expiresAt: '2026-11-21T20:00:00.000Z',
    },
  },
  handle: async ({ params }) => {
    const found = await operators.get(params.orgId, params.operatorId);
    if (!found) throw new NotFoundError('Operator not found');
    return created(
      await credentials.createOperatorSession(
        params.orgId,
        found.id,
        found.role,
        config.operatorSessionTtlHours,
      ),
    );
  },
});
