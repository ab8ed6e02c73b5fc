import { authCache } from '../../shared/auth/authenticate';
import { changedChatbotConfig } from '../../shared/chatbot/config';
import { clock } from '../../shared/clock';
import { organizations } from '../../shared/db/organizations';
import { NotFoundError, ValidationError } from '../../shared/errors';
import { created, ok, route } from '../../shared/http/route';
import { uuid } from '../../shared/schemas/common';
import { organizationExample } from '../../shared/schemas/examples';
import { lazily } from '../../shared/schemas/names';
import {
  createOrganizationBody,
  organization,
  updateOrganizationBody,
} from '../../shared/schemas/organization';
import * as z from '../../shared/schemas/zod';

const orgParams = lazily(() => z.strictObject({ orgId: uuid }));

function checkDefaultLocale(locales: readonly string[], defaultLocale: string): void {
  if (!locales.includes(defaultLocale)) {
    throw ValidationError.field(
      'defaultLocale',
      `defaultLocale must be one of the organization's locales (${locales.join(', ')})`,
    );
  }
}

export const createOrganization = route({
  method: 'POST',
  path: '/api/admin/organizations',
  operationId: 'createOrganization',
  summary: 'Create an organization',
  description:
    'Locales default to `["en"]` (or to `[defaultLocale]` when only that is given); `defaultLocale` defaults to the first locale and must be one of them. The response carries the public widget key.',
  tag: 'Provisioning',
  callers: ['platform'],
  body: createOrganizationBody,
  response: { status: 201, schema: organization, description: 'The new organization' },
  examples: {
    request: { name: 'Acme Retail', modules: ['automation_api'], locales: ['en', 'fr'], defaultLocale: 'en' },
    response: organizationExample,
  },
  handle: async ({ body }) => {
    const locales = [...new Set(body.locales ?? [body.defaultLocale ?? 'en'])];
    const defaultLocale = body.defaultLocale ?? locales[0] ?? 'en';
    checkDefaultLocale(locales, defaultLocale);
    return created(
      await organizations.create({
        name: body.name,
        modules: [...new Set(body.modules ?? [])],
        locales,
        defaultLocale,
        historyWindowDays: body.historyWindowDays ?? null,
      }),
    );
  },
});

export const getOrganization = route({
  method: 'GET',
  path: '/api/admin/organizations/{orgId}',
  operationId: 'getOrganization',
  summary: 'Get an organization',
  tag: 'Provisioning',
  callers: ['platform'],
  params: orgParams,
  response: {
    status: 200,
    schema: organization,
    description: 'The organization (its only secret-like field is the public widget key)',
  },
  errors: [404],
  examples: { response: organizationExample },
  handle: async ({ params }) => {
    const found = await organizations.get(params.orgId);
    if (!found) throw new NotFoundError('Organization not found');
    return ok(found);
  },
});

export const updateOrganization = route({
  method: 'PATCH',
  path: '/api/admin/organizations/{orgId}',
  operationId: 'updateOrganization',
  summary: 'Update an organization',
  description: [
    'Writes only the fields present. `chatbot` (the configuration `GET /api/chatbot/config` shows) is merged field by field: each field given replaces the stored one. Credentials cached by warm instances see the change within the auth cache TTL (10 s).',
    '`rateLimitPerMinute` (an integer 1–100,000, or null: no organization ceiling, the default) caps the requests of the organization in a fixed one-minute window, all its credentials together (API keys, operator sessions, visitor tokens, the widget key). The per-credential limit stays: a request counts toward the organization once its credential admitted it, and beyond the ceiling it is 429 `RATE_LIMITED` with `Retry-After` and `details.reason = "organization_rate_limit"`. `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` report whichever limit is closer to running out: the credential’s or the organization’s. A change takes effect within the auth cache TTL (10 s).',
  ].join('\n\n'),
  tag: 'Provisioning',
  callers: ['platform'],
  params: orgParams,
  body: updateOrganizationBody,
  response: { status: 200, schema: organization, description: 'The organization after the change' },
  errors: [404],
  examples: {
    request: { name: 'Acme Retail Europe', locales: ['en', 'fr', 'de'], rateLimitPerMinute: 6000 },
    response: {
      ...organizationExample,
      name: 'Acme Retail Europe',
      locales: ['en', 'fr', 'de'],
      rateLimitPerMinute: 6000,
      updatedAt: '2026-11-21T11:00:00.000Z',
    },
  },
  handle: async ({ params, body }) => {
    const current = await organizations.get(params.orgId);
    if (!current) throw new NotFoundError('Organization not found');
    const locales = body.locales ? [...new Set(body.locales)] : current.locales;
    const defaultLocale =
      body.defaultLocale ??
      (locales.includes(current.defaultLocale) ? current.defaultLocale : (locales[0] ?? 'en'));
    checkDefaultLocale(locales, defaultLocale);
    const updated = await organizations.update(params.orgId, {
      ...body,
      ...(body.modules ? { modules: [...new Set(body.modules)] } : {}),
      locales,
      defaultLocale,
      chatbot: body.chatbot ? changedChatbotConfig(current.chatbot, body.chatbot, clock.nowIso()) : undefined,
    });
    if (!updated) throw new NotFoundError('Organization not found');
    authCache.forgetOrganization(params.orgId);
    return ok(updated);
  },
});
