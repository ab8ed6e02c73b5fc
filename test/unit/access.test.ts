import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConversation } from '../../functions/conversations/access';
import type { ApiKeyCaller, OrgCaller } from '../../shared/auth/caller';
import { clock } from '../../shared/clock';
import { keys } from '../../shared/db/keys';
import { ForbiddenError, ModuleRequiredError, NotFoundError } from '../../shared/errors';
import { checkAccess } from '../../shared/http/middleware/authorize';
import { route } from '../../shared/http/route';
import type { Organization } from '../../shared/schemas/organization';
import * as z from '../../shared/schemas/zod';

const orgId = '01a200d1-22e7-7191-94d8-9a34a53961fd';
const conversationId = '01a200d1-479d-71be-a50a-39902031adcd';
const visitorId = '01a200d1-2401-7c06-84af-03832858c44b';
const apiKey: ApiKeyCaller = { kind: 'apiKey', orgId, credentialId: 'k', scopes: [], name: 'unit' };

const organization = (historyWindowDays: number | null): Organization => ({
  id: orgId,
  name: 'Acme',
  modules: ['automation_api'],
  locales: ['en'],
  defaultLocale: 'en',
  historyWindowDays,
  rateLimitPerMinute: null,
  widgetKey: 'svc_wpk_x',
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
});

describe('loadConversation', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  afterAll(() => ddb.restore());
  beforeEach(() => {
    ddb.reset();
    ddb.on(GetCommand, { Key: keys.conversation(orgId, conversationId) }).resolves({
      Item: { id: conversationId, organizationId: orgId, visitorId, lastMessageAt: clock.nowIso() },
    });
  });
  afterEach(() => clock.reset());

  it('refuses a conversation older than the history window with its reason (403)', async () => {
    clock.advance(8 * 86_400_000);
    const refused = loadConversation(apiKey, organization(7), conversationId);
    await expect(refused).rejects.toBeInstanceOf(ForbiddenError);
    await expect(refused).rejects.toMatchObject({ details: { reason: 'outside_history_window' } });
    await expect(loadConversation(apiKey, organization(30), conversationId)).resolves.toMatchObject({
      id: conversationId,
    });
    await expect(loadConversation(apiKey, organization(null), conversationId)).resolves.toMatchObject({
      id: conversationId,
    });
  });

  it('hides another visitor’s and a soft-deleted conversation (404)', async () => {
    const otherVisitor: OrgCaller = { kind: 'visitor', orgId, credentialId: 'v', visitorId: orgId };
    await expect(loadConversation(otherVisitor, organization(null), conversationId)).rejects.toBeInstanceOf(
      NotFoundError,
    );
    ddb.on(GetCommand).resolves({
      Item: { id: conversationId, visitorId, deletedAt: clock.nowIso(), lastMessageAt: clock.nowIso() },
    });
    await expect(loadConversation(apiKey, organization(null), conversationId)).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });
});

describe('checkAccess', () => {
  const adminOnly = route({
    method: 'POST',
    path: '/api/things',
    operationId: 'createThing',
    summary: 'Create a thing',
    tag: 'Test',
    scope: 'conversations:write',
    adminOnly: true,
    callers: ['apiKey', 'operator'],
    response: { status: 201, schema: z.unknown(), description: 'The thing' },
    handle: async () => ({ status: 201, body: {} }),
  });
  const operator = (role: 'admin' | 'operator'): OrgCaller => ({
    kind: 'operator',
    orgId,
    credentialId: 's',
    operatorId: orgId,
    role,
  });

  it('admits admin sessions and keys with the scope to admin-only routes, not operators', () => {
    expect(() => checkAccess(adminOnly, operator('admin'), [])).not.toThrow();
    expect(() => checkAccess(adminOnly, operator('operator'), [])).toThrow(ForbiddenError);
    expect(() =>
      checkAccess(adminOnly, { ...apiKey, scopes: ['conversations:write'] }, ['automation_api']),
    ).not.toThrow();
    expect(() =>
      checkAccess(adminOnly, { ...apiKey, scopes: ['conversations:read'] }, ['automation_api']),
    ).toThrow(ForbiddenError);
  });

  it('checks the module before the scope, and the caller kind before both', () => {
    expect(() => checkAccess(adminOnly, { ...apiKey, scopes: ['conversations:read'] }, [])).toThrow(
      ModuleRequiredError,
    );
    const visitor: OrgCaller = { kind: 'visitor', orgId, credentialId: 'v', visitorId };
    expect(() => checkAccess(adminOnly, visitor, [])).toThrow(ForbiddenError);
  });
});
