import { isoInstant, offsetPage, offsetQuery, plainText, uuid } from './common';
import { documented, lazily, named } from './names';
import * as z from './zod';

export const aiProviderKinds = ['openai-compatible'] as const;

export const aiProvider = named(
  'AiProvider',
  () =>
    z.object({
      id: uuid,
      name: z.string(),
      kind: z.enum(aiProviderKinds),
      baseUrl: z.string(),
      model: z.string(),
      enabled: z.boolean(),
      /** Whether a key is stored; the key itself is never returned. */
      hasApiKey: z.boolean(),
      /** The stored key's last four characters, or null without a key. */
      apiKeyLast4: z.nullable(z.string()),
      createdAt: isoInstant,
      updatedAt: isoInstant,
    }),
  'A platform-wide AI provider. Its API key is stored encrypted and never returned.',
);
export type AiProvider = z.infer<typeof aiProvider>;

const name = z.string().check(z.trim(), z.minLength(1), z.maxLength(200), plainText());
/** http or https, no credentials in it; the probe's target guard decides what may be reached. */
const baseUrl = documented(
  z.string().check(
    z.trim(),
    z.minLength(1),
    z.maxLength(2048),
    z.refine((value) => {
      try {
        const url = new URL(value);
        return (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password;
      } catch {
        return false;
      }
    }, 'Expected an http or https URL without credentials'),
  ),
  { format: 'uri', pattern: '^https?://' },
);
const model = z.string().check(z.trim(), z.minLength(1), z.maxLength(200), z.regex(/^[\x21-\x7E]+$/));
/** Empty on PATCH means "keep the stored key". */
const apiKey = z.string().check(z.maxLength(4096), z.regex(/^[\x21-\x7E]*$/, 'Expected printable ASCII'));

export const createAiProviderBody = named('CreateAiProviderRequest', () =>
  z.strictObject({
    name,
    kind: z.enum(aiProviderKinds),
    baseUrl,
    model,
    enabled: z.optional(z.boolean()),
    /** Null or empty: no key (a provider that needs none). */
    apiKey: z.optional(z.nullable(apiKey)),
  }),
);

export const updateAiProviderBody = named('UpdateAiProviderRequest', () =>
  z.strictObject({
    name: z.optional(name),
    kind: z.optional(z.enum(aiProviderKinds)),
    baseUrl: z.optional(baseUrl),
    model: z.optional(model),
    enabled: z.optional(z.boolean()),
    /** Omitted, empty or null: the stored key stays. */
    apiKey: z.optional(z.nullable(apiKey)),
  }),
);

export const aiProviderList = named('AiProviderPage', () => offsetPage(aiProvider));
export const aiProviderListQuery = lazily(() => z.strictObject(offsetQuery));
export const aiProviderParams = lazily(() => z.strictObject({ id: uuid }));

export const aiProviderTestResult = named(
  'AiProviderTestResult',
  () =>
    z.object({
      success: z.boolean(),
      /** The first choice's reply, at most 200 characters (on success). */
      reply: z.optional(z.string()),
      /** What went wrong (on failure): `timeout`, `http_<status>`, `non_public_address`… */
      error: z.optional(z.string()),
      latencyMs: z.int().check(z.minimum(0)),
    }),
  'The outcome of one probe of the provider: the provider is configuration, the outcome is data (200 either way).',
);
export type AiProviderTestResult = z.infer<typeof aiProviderTestResult>;
