import {
  MAX_ACTIONS,
  MAX_INTENT_POLICIES,
  MAX_KEYWORDS,
  MAX_RULES,
  MAX_SCHEDULE_DAYS,
} from './chatbot-limits';
import { isoInstant, plainText, uuid } from './common';
import { documented, lazily, named } from './names';
import * as z from './zod';

/**
 * The organization's chatbot configuration (`GET`/`PUT /api/chatbot/config`), kept on the
 * organization item, so the platform admin's organization record shows the same settings and the
 * simulation reads them with the organization. Bounded (./chatbot-limits.ts) so that item stays
 * small: it is what authentication reads.
 */

export const weekDays = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export const handlings = ['answer', 'handoff', 'collect_info'] as const;
export const policyPriorities = ['low', 'normal', 'high', 'urgent'] as const;

/** Intents and actions are the organization's own words ("billing", "order-status", "answer_from_knowledge"). */
const identifier = z.string().check(z.trim(), z.minLength(1), z.maxLength(64), plainText());
const time = z
  .string()
  .check(z.maxLength(5), z.regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'Expected HH:MM (00:00–23:59)'));

function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

const timezone = documented(
  z
    .string()
    .check(
      z.minLength(1),
      z.maxLength(64),
      z.regex(/^[A-Za-z0-9_+\-/]+$/),
      z.refine(isTimeZone, 'Expected an IANA time zone such as "Europe/Paris"'),
    ),
  { description: 'An IANA time zone, such as "Europe/Paris"' },
);

const scheduleDay = lazily(() =>
  z.strictObject({
    day: z.enum(weekDays),
    /** Opening time; a `to` earlier than `from` runs past midnight into the next day. */
    from: time,
    to: time,
  }),
);

export const chatbotSchedule = named(
  'ChatbotSchedule',
  () =>
    z.strictObject({
      timezone,
      days: z.array(scheduleDay).check(
        z.maxLength(MAX_SCHEDULE_DAYS),
        z.refine((days) => days.every((day) => day.from !== day.to), 'A day\'s "from" and "to" must differ'),
      ),
    }),
  'When the bot answers, in `timezone`; a day whose `to` is earlier than its `from` runs past midnight. Null: always.',
);

const keyword = z.string().check(z.trim(), z.minLength(1), z.maxLength(100), plainText());

export const chatbotRule = named('ChatbotRule', () =>
  z.object({
    id: uuid,
    name: z.string(),
    intent: z.string(),
    keywords: z.array(z.string()),
    actions: z.array(z.string()),
  }),
);

const ruleInput = lazily(() =>
  z.strictObject({
    /** Kept when given (so rules keep their ids across saves); generated otherwise. */
    id: z.optional(uuid),
    name: z.string().check(z.trim(), z.minLength(1), z.maxLength(100), plainText()),
    intent: identifier,
    keywords: z.array(keyword).check(z.maxLength(MAX_KEYWORDS)),
    actions: z.array(identifier).check(z.maxLength(MAX_ACTIONS)),
  }),
);

export const intentPolicy = named('ChatbotIntentPolicy', () =>
  z.strictObject({
    intent: identifier,
    handling: z.enum(handlings),
    tag: z.string().check(z.trim(), z.minLength(1), z.maxLength(50), plainText()),
    priority: z.enum(policyPriorities),
  }),
);

const threshold = z.number().check(z.minimum(0), z.maximum(1));

export const chatbotConfig = named('ChatbotConfig', () =>
  z.object({
    enabled: z.boolean(),
    schedule: z.nullable(chatbotSchedule),
    knowledgeThreshold: z.number(),
    rules: z.array(chatbotRule),
    intentPolicies: z.array(intentPolicy),
    updatedAt: isoInstant,
  }),
);
export type ChatbotConfig = z.infer<typeof chatbotConfig>;
export type ChatbotRule = z.infer<typeof chatbotRule>;
export type IntentPolicy = z.infer<typeof intentPolicy>;
export type ChatbotSchedule = z.infer<typeof chatbotSchedule>;

const rules = lazily(() =>
  z.array(ruleInput).check(
    z.maxLength(MAX_RULES),
    z.refine((list) => {
      const given = list.flatMap((rule) => (rule.id ? [rule.id] : []));
      return new Set(given).size === given.length;
    }, 'Rule ids must be unique'),
  ),
);
const intentPolicies = lazily(() =>
  z.array(intentPolicy).check(
    z.maxLength(MAX_INTENT_POLICIES),
    z.refine(
      (list) => new Set(list.map((policy) => policy.intent)).size === list.length,
      'One policy per intent',
    ),
  ),
);

/** `PUT /api/chatbot/config`: the whole configuration; an omitted field takes its default. */
export const putChatbotConfigBody = named('PutChatbotConfigRequest', () =>
  z.strictObject({
    /** Accepted so that a configuration read can be sent back as is; the service stamps its own. */
    updatedAt: z.optional(isoInstant),
    enabled: z.optional(z.boolean()),
    schedule: z.optional(z.nullable(chatbotSchedule)),
    knowledgeThreshold: z.optional(threshold),
    rules: z.optional(rules),
    intentPolicies: z.optional(intentPolicies),
  }),
);
export type PutChatbotConfig = z.infer<typeof putChatbotConfigBody>;

/** `PATCH /api/admin/organizations/{orgId}` `chatbot`: the fields given replace the stored ones. */
export const patchChatbotConfig = lazily(() =>
  z.strictObject({
    enabled: z.optional(z.boolean()),
    schedule: z.optional(z.nullable(chatbotSchedule)),
    knowledgeThreshold: z.optional(threshold),
    rules: z.optional(rules),
    intentPolicies: z.optional(intentPolicies),
  }),
);

/** `POST /api/chatbot/simulate`: a visitor's message, read in `locale` (enabled for the organization). */
export const MAX_SIMULATED_MESSAGE_LENGTH = 10_000;

export const simulateChatbotBody = named('SimulateChatbotRequest', () =>
  z.strictObject({
    message: z
      .string()
      .check(z.trim(), z.minLength(1), z.maxLength(MAX_SIMULATED_MESSAGE_LENGTH), plainText()),
    locale: documented(z.string().check(z.maxLength(64), z.regex(/^[A-Za-z0-9-]+$/)), {
      description:
        'The locale the message is written in: a BCP 47 tag the organization has enabled (another is 422 naming `locale`)',
    }),
  }),
);
export type SimulateChatbot = z.infer<typeof simulateChatbotBody>;

export const simulationOutcomes = [
  'disabled',
  'outside_schedule',
  'handoff',
  'knowledge_answer',
  'ai_answer',
  'fallback_message',
] as const;
export type SimulationOutcome = (typeof simulationOutcomes)[number];

export const chatbotSimulation = named(
  'ChatbotSimulation',
  () =>
    z.object({
      outcome: z.enum(simulationOutcomes),
      /** The matched rule's intent (`general` for the default rule). */
      intent: z.string(),
      consumesAiCredit: z.boolean(),
      rule: z.object({
        id: uuid,
        name: z.string(),
        intent: z.string(),
        actions: z.array(z.string()),
      }),
      intentPolicy: z.object({
        intent: z.string(),
        handling: z.enum(handlings),
        tag: z.string(),
        priority: z.enum(policyPriorities),
      }),
      knowledge: z.object({
        confidence: z.number(),
        threshold: z.number(),
        sufficient: z.boolean(),
        articles: z.array(
          z.object({ articleId: uuid, title: z.string(), slug: z.string(), score: z.number() }),
        ),
      }),
      gates: z.object({
        chatbotEnabled: z.boolean(),
        withinSchedule: z.boolean(),
        operatorAvailable: z.boolean(),
        aiFeatureEnabled: z.boolean(),
        providerAvailable: z.boolean(),
      }),
    }),
  'What the bot would do with a message, and why: the matched rule, its intent policy, the knowledge found and the gates. No model is called.',
);
export type ChatbotSimulation = z.infer<typeof chatbotSimulation>;
