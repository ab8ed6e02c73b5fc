import { scopes } from '../auth/scopes';
import { type ChatbotConfig, chatbotConfig, patchChatbotConfig } from './chatbot';
import { isoInstant, localeTag, plainText, uuid } from './common';
import { documented, named } from './names';
import * as z from './zod';

const moduleName = z
  .string()
  .check(
    z.maxLength(64),
    z.regex(/^[a-z][a-z0-9_]{0,63}$/, 'Expected a module name such as "automation_api"'),
  );

const rateLimitDescription =
  'Requests a minute the organization may make, all its credentials together (on top of each credential’s own limit); null: no organization ceiling (the default).';

export const organization = named('Organization', () =>
  z.object({
    id: uuid,
    name: z.string(),
    modules: z.array(z.string()),
    locales: z.array(z.string()),
    defaultLocale: z.string(),
    historyWindowDays: z.nullable(z.int()),
    rateLimitPerMinute: documented(z.nullable(z.int()), { description: rateLimitDescription }),
    /** Public: identifies the organization to the chat widget. */
    widgetKey: z.string(),
    /** The chatbot configuration, as `GET /api/chatbot/config` shows it. */
    chatbot: chatbotConfig,
    createdAt: isoInstant,
    updatedAt: isoInstant,
  }),
);
export type Organization = z.infer<typeof organization>;
export type ChatbotSettings = ChatbotConfig;

const organizationFields = {
  name: z.string().check(z.trim(), z.minLength(1), z.maxLength(200), plainText()),
  modules: z.array(moduleName).check(z.maxLength(50)),
  locales: z.array(localeTag).check(z.minLength(1), z.maxLength(100)),
  defaultLocale: localeTag,
  historyWindowDays: z.nullable(z.int().check(z.minimum(1), z.maximum(36_500))),
  rateLimitPerMinute: documented(z.nullable(z.int().check(z.minimum(1), z.maximum(100_000))), {
    description: rateLimitDescription,
  }),
};

export const createOrganizationBody = named('CreateOrganizationRequest', () =>
  z.strictObject({
    name: organizationFields.name,
    modules: z.optional(organizationFields.modules),
    locales: z.optional(organizationFields.locales),
    defaultLocale: z.optional(organizationFields.defaultLocale),
    historyWindowDays: z.optional(organizationFields.historyWindowDays),
  }),
);

export const updateOrganizationBody = named('UpdateOrganizationRequest', () =>
  z.strictObject({
    name: z.optional(organizationFields.name),
    modules: z.optional(organizationFields.modules),
    locales: z.optional(organizationFields.locales),
    defaultLocale: z.optional(organizationFields.defaultLocale),
    historyWindowDays: z.optional(organizationFields.historyWindowDays),
    rateLimitPerMinute: z.optional(organizationFields.rateLimitPerMinute),
    chatbot: z.optional(patchChatbotConfig),
  }),
);

export const scopeName = z.enum(scopes);

export const createApiKeyBody = named('CreateApiKeyRequest', () =>
  z.strictObject({
    name: z.string().check(z.trim(), z.minLength(1), z.maxLength(200), plainText()),
    scopes: z._default(z.array(scopeName).check(z.maxLength(scopes.length)), []),
  }),
);

export const createdApiKey = named('CreatedApiKey', () =>
  z.object({
    id: uuid,
    name: z.string(),
    scopes: z.array(z.string()),
    /** The secret key: shown only in this response. */
    key: z.string(),
    createdAt: isoInstant,
  }),
);

export const operatorRole = z.enum(['admin', 'operator']);

export const operator = named('Operator', () =>
  z.object({
    id: uuid,
    orgId: uuid,
    name: z.string(),
    email: z.string(),
    role: operatorRole,
    createdAt: isoInstant,
  }),
);
export type Operator = z.infer<typeof operator>;

export const createOperatorBody = named('CreateOperatorRequest', () =>
  z.strictObject({
    name: z.string().check(z.trim(), z.minLength(1), z.maxLength(200), plainText()),
    email: z.email().check(z.maxLength(320)),
    role: operatorRole,
  }),
);

export const sessionToken = named('OperatorSession', () =>
  z.object({ token: z.string(), expiresAt: isoInstant }),
);
