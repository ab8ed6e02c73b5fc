import { createHash } from 'node:crypto';
import { foldText } from '../kb/search';
import type {
  ChatbotConfig,
  ChatbotRule,
  ChatbotSchedule,
  ChatbotSimulation,
  IntentPolicy,
  SimulationOutcome,
} from '../schemas/chatbot';
import { weekDays } from '../schemas/chatbot';

/**
 * The chatbot's decision, pure: what the bot would do with a message, given the organization's
 * configuration, the knowledge found for it and the gates (presence, modules, providers, time).
 * `POST /api/chatbot/simulate` gathers those facts and calls `simulate`; no model is ever called.
 */

export type SimulatedRule = ChatbotSimulation['rule'];
export type SimulatedKnowledge = ChatbotSimulation['knowledge'];
export type Gates = ChatbotSimulation['gates'];

export const DEFAULT_RULE_NAME = 'Default';
export const DEFAULT_INTENT = 'general';
export const DEFAULT_ACTIONS = ['answer_from_knowledge'];

/** The namespace of the default rules' name-based ids (UUIDv5, RFC 9562 §5.5): fixed forever. */
const DEFAULT_RULE_NAMESPACE = '5f0c7e2a-3b8d-4c1e-9a6f-2d4b8e7c1a93';

/** A UUIDv5 of `name` in `namespace`: the same inputs always give the same id. */
export function nameBasedUuid(namespace: string, name: string): string {
  const hash = createHash('sha1')
    .update(Buffer.from(namespace.replaceAll('-', ''), 'hex'))
    .update(name, 'utf8')
    .digest();
  const bytes = hash.subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x50;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** The built-in rule when none matches: its id is derived from the organization's, so it never changes. */
export function defaultRule(orgId: string): SimulatedRule {
  return {
    id: nameBasedUuid(DEFAULT_RULE_NAMESPACE, `chatbot-default-rule:${orgId}`),
    name: DEFAULT_RULE_NAME,
    intent: DEFAULT_INTENT,
    actions: [...DEFAULT_ACTIONS],
  };
}

const WORD = /[\p{L}\p{N}]+/gu;
/** Scripts written without spaces between words: a keyword in them is found anywhere in the text. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/** The words of a text, lower case, accents and ligatures folded (as the knowledge search reads). */
export function wordsOf(text: string): string[] {
  return [...foldText(text).matchAll(WORD)].map(([word]) => word);
}

/** A message read once, for testing many keywords against it. */
interface ReadMessage {
  folded: string;
  /** The words joined by single spaces, with a space at each end: a whole-word search is `includes`. */
  spaced: string;
}

function readMessage(message: string): ReadMessage {
  return { folded: foldText(message), spaced: ` ${wordsOf(message).join(' ')} ` };
}

/**
 * Whether `keyword` occurs in the message as whole words: case, accents and punctuation aside
 * ("Remboursement!" holds "remboursement"; "refunds" does not hold "refund"; "order status" is
 * found in "my ORDER-status?"). A keyword in Chinese, Japanese or Korean, written without spaces,
 * is found anywhere in the text.
 */
function holdsKeyword(message: ReadMessage, keyword: string): boolean {
  const words = wordsOf(keyword);
  if (words.length === 0) return false;
  const phrase = words.join(' ');
  if (UNSPACED.test(phrase)) return words.every((word) => message.folded.includes(word));
  return message.spaced.includes(` ${phrase} `);
}

/** The first rule (in order) with a keyword in the message; else the organization's default rule. */
export function matchRule(rules: readonly ChatbotRule[], message: string, orgId: string): SimulatedRule {
  const read = readMessage(message);
  const rule = rules.find((candidate) => candidate.keywords.some((keyword) => holdsKeyword(read, keyword)));
  if (!rule) return defaultRule(orgId);
  return { id: rule.id, name: rule.name, intent: rule.intent, actions: [...rule.actions] };
}

/** The policy configured for `intent`, else: answer, tagged with the intent, low priority. */
export function policyFor(policies: readonly IntentPolicy[], intent: string): IntentPolicy {
  return (
    policies.find((policy) => policy.intent === intent) ?? {
      intent,
      handling: 'answer',
      tag: intent,
      priority: 'low',
    }
  );
}

const formats = new Map<string, Intl.DateTimeFormat>();

function formatFor(timeZone: string): Intl.DateTimeFormat {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formats.set(timeZone, format);
  }
  return format;
}

const WEEKDAY_INDEX: Record<string, number> = { Mon: 0, Tue: 1, Wed: 2, Thu: 3, Fri: 4, Sat: 5, Sun: 6 };

/** The wall clock at `nowMs` in `timeZone`: the day of the week (0 = Monday) and minutes since midnight. */
export function wallClock(nowMs: number, timeZone: string): { day: number; minutes: number } {
  let day = 0;
  let hour = 0;
  let minute = 0;
  for (const part of formatFor(timeZone).formatToParts(new Date(nowMs))) {
    if (part.type === 'weekday') day = WEEKDAY_INDEX[part.value] ?? 0;
    else if (part.type === 'hour') hour = Number(part.value) % 24;
    else if (part.type === 'minute') minute = Number(part.value);
  }
  return { day, minutes: hour * 60 + minute };
}

const minutesOf = (time: string): number => {
  const [hours, minutes] = time.split(':');
  return Number(hours) * 60 + Number(minutes);
};

/**
 * Whether `nowMs` falls in the schedule, read on the wall clock of the schedule's time zone (so
 * daylight-saving changes move the hours with the clock). Each day runs from `from` (included) to
 * `to` (excluded); a `to` earlier than `from` runs past midnight into the next day (fri 22:00–02:00
 * holds Saturday 01:00). No schedule: always.
 */
export function withinSchedule(schedule: ChatbotSchedule | null, nowMs: number): boolean {
  if (!schedule) return true;
  const now = wallClock(nowMs, schedule.timezone);
  return schedule.days.some((range) => {
    const day = weekDays.indexOf(range.day);
    const from = minutesOf(range.from);
    const to = minutesOf(range.to);
    if (from < to) return now.day === day && now.minutes >= from && now.minutes < to;
    const nextDay = (day + 1) % 7;
    return (now.day === day && now.minutes >= from) || (now.day === nextDay && now.minutes < to);
  });
}

/** An article as scored for the message (the best first), its score 0..1. */
export interface ScoredKnowledge {
  articleId: string;
  title: string;
  slug: string;
  score: number;
}

/** Scores are shown to 4 decimals, as the knowledge search shows them. */
const rounded = (score: number) => Math.round(score * 10_000) / 10_000;

/**
 * The knowledge found: `confidence` the best score (0 without any), `sufficient` when it reaches
 * the threshold, and the best three articles scoring above 0. Scores are rounded first, so the
 * answer agrees with itself (a shown confidence equal to the threshold is sufficient).
 */
export function knowledgeOf(ranked: readonly ScoredKnowledge[], threshold: number): SimulatedKnowledge {
  const articles = ranked
    .map((article) => ({ ...article, score: rounded(article.score) }))
    .filter((article) => article.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, 3);
  const confidence = articles[0]?.score ?? 0;
  return { confidence, threshold, sufficient: confidence >= threshold, articles };
}

/**
 * The first outcome that applies: the bot off, outside its schedule, a policy that hands off,
 * knowledge good enough, the AI (feature and a provider), an operator to hand off to, else the
 * fallback message.
 */
export function outcomeOf(
  gates: Gates,
  policy: IntentPolicy,
  knowledge: SimulatedKnowledge,
): SimulationOutcome {
  if (!gates.chatbotEnabled) return 'disabled';
  if (!gates.withinSchedule) return 'outside_schedule';
  if (policy.handling === 'handoff') return 'handoff';
  if (knowledge.sufficient) return 'knowledge_answer';
  if (gates.aiFeatureEnabled && gates.providerAvailable) return 'ai_answer';
  if (gates.operatorAvailable) return 'handoff';
  return 'fallback_message';
}

export interface SimulationFacts {
  orgId: string;
  config: ChatbotConfig;
  message: string;
  /** The published articles scored against the message, in the requested locale. */
  ranked: readonly ScoredKnowledge[];
  operatorAvailable: boolean;
  aiFeatureEnabled: boolean;
  providerAvailable: boolean;
  /** Now, injected: the schedule is read at this instant. */
  nowMs: number;
}

export function simulate(facts: SimulationFacts): ChatbotSimulation {
  const { config } = facts;
  const rule = matchRule(config.rules, facts.message, facts.orgId);
  const intentPolicy = policyFor(config.intentPolicies, rule.intent);
  const knowledge = knowledgeOf(facts.ranked, config.knowledgeThreshold);
  const gates: Gates = {
    chatbotEnabled: config.enabled,
    withinSchedule: withinSchedule(config.schedule, facts.nowMs),
    operatorAvailable: facts.operatorAvailable,
    aiFeatureEnabled: facts.aiFeatureEnabled,
    providerAvailable: facts.providerAvailable,
  };
  const outcome = outcomeOf(gates, intentPolicy, knowledge);
  return {
    outcome,
    intent: rule.intent,
    consumesAiCredit: outcome === 'ai_answer',
    rule,
    intentPolicy: {
      intent: intentPolicy.intent,
      handling: intentPolicy.handling,
      tag: intentPolicy.tag,
      priority: intentPolicy.priority,
    },
    knowledge,
    gates,
  };
}
