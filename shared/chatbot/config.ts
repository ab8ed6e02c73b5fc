import { ValidationError } from '../errors';
import { uuidv7 } from '../ids';
import type {
  ChatbotConfig,
  ChatbotRule,
  ChatbotSchedule,
  IntentPolicy,
  PutChatbotConfig,
} from '../schemas/chatbot';
import { DEFAULT_KNOWLEDGE_THRESHOLD, MAX_CONFIG_BYTES } from '../schemas/chatbot-limits';
import { isRecord } from '../schemas/hand-checks';

/** A new organization's bot: off, always in schedule, no rules of its own. */
export function defaultChatbotConfig(updatedAt: string): ChatbotConfig {
  return {
    enabled: false,
    schedule: null,
    knowledgeThreshold: DEFAULT_KNOWLEDGE_THRESHOLD,
    rules: [],
    intentPolicies: [],
    updatedAt,
  };
}

/**
 * The configuration as stored, in the answer's shape. Organizations written before the
 * configuration had its present shape (`confidenceThreshold`, `providerId`) read as the defaults
 * plus what still applies (`enabled`).
 */
export function chatbotConfigOf(stored: unknown, fallbackUpdatedAt: string): ChatbotConfig {
  const base = defaultChatbotConfig(fallbackUpdatedAt);
  if (!isRecord(stored)) return base;
  return {
    enabled: typeof stored.enabled === 'boolean' ? stored.enabled : base.enabled,
    schedule: isRecord(stored.schedule) ? (stored.schedule as unknown as ChatbotSchedule) : null,
    knowledgeThreshold:
      typeof stored.knowledgeThreshold === 'number' ? stored.knowledgeThreshold : base.knowledgeThreshold,
    rules: Array.isArray(stored.rules) ? (stored.rules as ChatbotRule[]) : [],
    intentPolicies: Array.isArray(stored.intentPolicies) ? (stored.intentPolicies as IntentPolicy[]) : [],
    updatedAt: typeof stored.updatedAt === 'string' ? stored.updatedAt : base.updatedAt,
  };
}

/**
 * The configuration after a change: the fields given replace the stored ones (PUT gives them all,
 * defaults filled in by the caller), rules without an id get one, and the result must stay within
 * MAX_CONFIG_BYTES, because it lives on the organization item that authentication reads.
 */
export function changedChatbotConfig(
  current: ChatbotConfig,
  changes: Omit<PutChatbotConfig, 'updatedAt'>,
  updatedAt: string,
): ChatbotConfig {
  const next: ChatbotConfig = {
    enabled: changes.enabled ?? current.enabled,
    schedule: changes.schedule === undefined ? current.schedule : changes.schedule,
    knowledgeThreshold: changes.knowledgeThreshold ?? current.knowledgeThreshold,
    rules: changes.rules
      ? changes.rules.map((rule) => ({
          id: rule.id ?? uuidv7(),
          name: rule.name,
          intent: rule.intent,
          keywords: rule.keywords,
          actions: rule.actions,
        }))
      : current.rules,
    intentPolicies: changes.intentPolicies ?? current.intentPolicies,
    updatedAt,
  };
  const bytes = Buffer.byteLength(JSON.stringify(next));
  if (bytes > MAX_CONFIG_BYTES) {
    throw ValidationError.field(
      'rules',
      `The chatbot configuration may take at most ${MAX_CONFIG_BYTES} bytes as JSON (this one: ${bytes})`,
      { reason: 'config_too_large' },
    );
  }
  return next;
}

/** What `PUT` means: every field, omitted ones at their defaults (`updatedAt` is the service's). */
export function replacementOf(body: PutChatbotConfig): Required<Omit<PutChatbotConfig, 'updatedAt'>> {
  const defaults = defaultChatbotConfig('');
  return {
    enabled: body.enabled ?? defaults.enabled,
    schedule: body.schedule === undefined ? defaults.schedule : body.schedule,
    knowledgeThreshold: body.knowledgeThreshold ?? defaults.knowledgeThreshold,
    rules: body.rules ?? [],
    intentPolicies: body.intentPolicies ?? [],
  };
}
