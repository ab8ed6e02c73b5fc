import { describe, expect, it } from 'vitest';
import { defaultChatbotConfig } from '../../shared/chatbot/config';
import {
  defaultRule,
  type Gates,
  knowledgeOf,
  matchRule,
  outcomeOf,
  policyFor,
  type ScoredKnowledge,
  type SimulationFacts,
  simulate,
  wallClock,
  withinSchedule,
} from '../../shared/chatbot/simulate';
import type { ChatbotRule, ChatbotSchedule, IntentPolicy } from '../../shared/schemas/chatbot';

const ORG = '019a7c21-0c00-7a11-8b22-3c33d44e5500';
const OTHER_ORG = '019a7c21-0c00-7a11-8b22-3c33d44e5599';
const at = (iso: string) => Date.parse(iso);

const rule = (id: string, intent: string, keywords: string[]): ChatbotRule => ({
  id: `019a7c21-0c00-7a11-8b22-3c33d44e55${id}`,
  name: `Rule ${id}`,
  intent,
  keywords,
  actions: ['answer_from_knowledge'],
});

describe('rule matching', () => {
  const refunds = rule('01', 'billing', ['refund', 'Remboursement']);
  const orders = rule('02', 'orders', ['order status', 'élève']);
  const humans = rule('03', 'human', ['agent', 'refund']);
  const chinese = rule('04', 'billing-zh', ['退款']);
  const rules = [refunds, orders, humans, chinese];

  it('finds a keyword whatever its case and accents, as a whole word', () => {
    expect(matchRule(rules, 'I want a REFUND!', ORG).id).toBe(refunds.id);
    expect(matchRule(rules, 'Un rembourSÉment, svp.', ORG).id).toBe(refunds.id);
    expect(matchRule(rules, 'eleve absent', ORG).id).toBe(orders.id);
    expect(matchRule(rules, 'ÉLÈVE absent', ORG).id).toBe(orders.id);
  });

  it('does not find a keyword inside a longer word', () => {
    expect(matchRule(rules, 'refunds and prefunding', ORG).intent).toBe('general');
    expect(matchRule(rules, 'agents', ORG).intent).toBe('general');
  });

  it('finds a keyword of several words as a sequence, punctuation aside', () => {
    expect(matchRule(rules, 'What is my ORDER-status?', ORG).id).toBe(orders.id);
    expect(matchRule(rules, 'order the status', ORG).intent).toBe('general');
  });

  it('takes the first rule in order when several match', () => {
    expect(matchRule(rules, 'agent, refund please', ORG).id).toBe(refunds.id);
    expect(matchRule([humans, refunds], 'agent, refund please', ORG).id).toBe(humans.id);
  });

  it('finds a keyword written without spaces anywhere in the message', () => {
    expect(matchRule(rules, '我想要退款。', ORG).id).toBe(chinese.id);
  });

  it('answers the rule as configured, without its keywords', () => {
    expect(matchRule(rules, 'refund', ORG)).toEqual({
      id: refunds.id,
      name: refunds.name,
      intent: 'billing',
      actions: ['answer_from_knowledge'],
    });
  });

  it('falls back to the default rule, whose id is the same every time for one organization', () => {
    const found = matchRule(rules, 'Hello there', ORG);

    expect(found).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      name: 'Default',
      intent: 'general',
      actions: ['answer_from_knowledge'],
    });
    expect(matchRule([], 'anything', ORG)).toEqual(found);
    expect(defaultRule(ORG)).toEqual(found);
    expect(defaultRule(OTHER_ORG).id).not.toBe(found.id);
    expect(matchRule([rule('05', 'x', [])], 'x', ORG)).toEqual(found);
  });
});

describe('intent policy', () => {
  const policies: IntentPolicy[] = [
    { intent: 'billing', handling: 'handoff', tag: 'money', priority: 'high' },
  ];

  it('is the policy configured for the intent', () => {
    expect(policyFor(policies, 'billing')).toEqual(policies[0]);
  });

  it('is, without one, to answer with the intent as tag and low priority', () => {
    expect(policyFor(policies, 'general')).toEqual({
      intent: 'general',
      handling: 'answer',
      tag: 'general',
      priority: 'low',
    });
  });
});

describe('schedule', () => {
  const schedule = (timezone: string, days: ChatbotSchedule['days']): ChatbotSchedule => ({ timezone, days });

  it('is always open without a schedule', () => {
    expect(withinSchedule(null, at('2026-11-21T03:00:00Z'))).toBe(true);
  });

  it('is closed with a schedule of no days', () => {
    expect(withinSchedule(schedule('UTC', []), at('2026-11-21T03:00:00Z'))).toBe(false);
  });

  it('includes the opening minute and excludes the closing one', () => {
    const monday = schedule('UTC', [{ day: 'mon', from: '09:00', to: '18:00' }]);

    expect(withinSchedule(monday, at('2026-11-23T08:59:59Z'))).toBe(false);
    expect(withinSchedule(monday, at('2026-11-23T09:00:00Z'))).toBe(true);
    expect(withinSchedule(monday, at('2026-11-23T17:59:59Z'))).toBe(true);
    expect(withinSchedule(monday, at('2026-11-23T18:00:00Z'))).toBe(false);
    // The same hours on another day.
    expect(withinSchedule(monday, at('2026-11-24T12:00:00Z'))).toBe(false);
  });

  it('runs a day whose end is before its start past midnight into the next day', () => {
    const fridayNight = schedule('UTC', [{ day: 'fri', from: '22:00', to: '02:00' }]);

    expect(withinSchedule(fridayNight, at('2026-11-20T21:59:00Z'))).toBe(false);
    expect(withinSchedule(fridayNight, at('2026-11-20T22:00:00Z'))).toBe(true);
    expect(withinSchedule(fridayNight, at('2026-11-20T23:59:00Z'))).toBe(true);
    // Saturday 01:00 belongs to Friday's night.
    expect(withinSchedule(fridayNight, at('2026-11-21T01:00:00Z'))).toBe(true);
    expect(withinSchedule(fridayNight, at('2026-11-21T02:00:00Z'))).toBe(false);
    // Friday 01:00 belongs to Thursday's night, which is not scheduled.
    expect(withinSchedule(fridayNight, at('2026-11-20T01:00:00Z'))).toBe(false);
    // Saturday 23:00 is not Friday's.
    expect(withinSchedule(fridayNight, at('2026-11-21T23:00:00Z'))).toBe(false);
  });

  it('runs Sunday night into Monday morning', () => {
    const sundayNight = schedule('UTC', [{ day: 'sun', from: '23:00', to: '01:00' }]);

    expect(withinSchedule(sundayNight, at('2026-11-23T00:30:00Z'))).toBe(true);
    expect(withinSchedule(sundayNight, at('2026-11-24T00:30:00Z'))).toBe(false);
  });

  it("reads the day and the hour on the schedule's time zone, not on UTC", () => {
    // Monday 09:30 in Tokyo is Monday 00:30 UTC; Sunday 09:30 in Tokyo is Sunday 00:30 UTC.
    const tokyo = schedule('Asia/Tokyo', [{ day: 'mon', from: '09:00', to: '10:00' }]);
    expect(withinSchedule(tokyo, at('2026-11-23T00:30:00Z'))).toBe(true);
    expect(withinSchedule(tokyo, at('2026-11-22T00:30:00Z'))).toBe(false);
    expect(withinSchedule(tokyo, at('2026-11-23T09:30:00Z'))).toBe(false);

    // Saturday 01:00 UTC is still Friday 17:00 in Los Angeles.
    const losAngeles = schedule('America/Los_Angeles', [{ day: 'fri', from: '17:00', to: '18:00' }]);
    expect(withinSchedule(losAngeles, at('2026-11-21T01:00:00Z'))).toBe(true);

    // Sunday noon UTC is already Monday 02:00 at UTC+14.
    const kiritimati = schedule('Pacific/Kiritimati', [{ day: 'mon', from: '01:00', to: '03:00' }]);
    expect(withinSchedule(kiritimati, at('2026-11-22T12:00:00Z'))).toBe(true);
  });

  it('crosses midnight on the local clock: Friday 22:00–02:00 in Paris holds Saturday 01:00 in Paris', () => {
    const paris = schedule('Europe/Paris', [{ day: 'fri', from: '22:00', to: '02:00' }]);

    // Saturday 01:00 in Paris (UTC+1 in November) is Saturday 00:00 UTC.
    expect(withinSchedule(paris, at('2026-11-21T00:00:00Z'))).toBe(true);
    // Friday 21:30 UTC is Friday 22:30 in Paris.
    expect(withinSchedule(paris, at('2026-11-20T21:30:00Z'))).toBe(true);
    // Saturday 01:30 UTC is 02:30 in Paris: closed.
    expect(withinSchedule(paris, at('2026-11-21T01:30:00Z'))).toBe(false);
  });

  it('follows daylight saving time: the opening hour moves with the wall clock', () => {
    const newYork = schedule('America/New_York', [{ day: 'mon', from: '09:00', to: '17:00' }]);

    // 13:30 UTC is 08:30 in winter (EST) and 09:30 in summer (EDT).
    expect(withinSchedule(newYork, at('2026-01-12T13:30:00Z'))).toBe(false);
    expect(withinSchedule(newYork, at('2026-07-13T13:30:00Z'))).toBe(true);
  });

  it('honours the hours around a change of clock', () => {
    const paris = schedule('Europe/Paris', [{ day: 'sun', from: '02:00', to: '03:00' }]);

    // Spring forward (29 March 2026, 02:00 → 03:00): the hour never happens on the wall clock.
    expect(wallClock(at('2026-03-29T00:59:00Z'), 'Europe/Paris')).toEqual({ day: 6, minutes: 119 });
    expect(wallClock(at('2026-03-29T01:00:00Z'), 'Europe/Paris')).toEqual({ day: 6, minutes: 180 });
    expect(withinSchedule(paris, at('2026-03-29T01:00:00Z'))).toBe(false);
    // Fall back (25 October 2026, 03:00 → 02:00): 02:30 happens twice, both times within.
    expect(withinSchedule(paris, at('2026-10-25T00:30:00Z'))).toBe(true);
    expect(withinSchedule(paris, at('2026-10-25T01:30:00Z'))).toBe(true);
    expect(withinSchedule(paris, at('2026-10-25T02:30:00Z'))).toBe(false);
  });

  it('reads midnight as 00:00, not 24:00', () => {
    expect(wallClock(at('2026-11-23T00:00:00Z'), 'UTC')).toEqual({ day: 0, minutes: 0 });
    expect(wallClock(at('2026-11-22T23:59:00Z'), 'UTC')).toEqual({ day: 6, minutes: 1439 });
  });
});

describe('knowledge', () => {
  const article = (n: number, score: number): ScoredKnowledge => ({
    articleId: `019a7c21-0c00-7a11-8b22-3c33d44e56${String(n).padStart(2, '0')}`,
    title: `Article ${n}`,
    slug: `article-${n}`,
    score,
  });

  it('keeps the best three scoring above 0, best first, the best as confidence', () => {
    const found = knowledgeOf(
      [article(1, 0.2), article(2, 0.9), article(3, 0.00001), article(4, 0.5), article(5, 0.4)],
      0.35,
    );

    expect(found).toEqual({
      confidence: 0.9,
      threshold: 0.35,
      sufficient: true,
      articles: [article(2, 0.9), article(4, 0.5), article(5, 0.4)],
    });
  });

  it('is not sufficient below the threshold, and sufficient at it exactly', () => {
    expect(knowledgeOf([article(1, 0.34994)], 0.35)).toMatchObject({ confidence: 0.3499, sufficient: false });
    expect(knowledgeOf([article(1, 0.34996)], 0.35)).toMatchObject({ confidence: 0.35, sufficient: true });
  });

  it('has confidence 0 and no articles when nothing scores', () => {
    expect(knowledgeOf([article(1, 0)], 0.35)).toEqual({
      confidence: 0,
      threshold: 0.35,
      sufficient: false,
      articles: [],
    });
  });
});

describe('outcome', () => {
  const open: Gates = {
    chatbotEnabled: true,
    withinSchedule: true,
    operatorAvailable: false,
    aiFeatureEnabled: false,
    providerAvailable: false,
  };
  const answer = policyFor([], 'general');
  const handoff: IntentPolicy = { intent: 'human', handling: 'handoff', tag: 'human', priority: 'urgent' };
  const collect: IntentPolicy = { intent: 'lead', handling: 'collect_info', tag: 'lead', priority: 'normal' };
  const enough = knowledgeOf([{ articleId: 'a', title: 't', slug: 's', score: 0.9 }], 0.35);
  const little = knowledgeOf([{ articleId: 'a', title: 't', slug: 's', score: 0.1 }], 0.35);
  const everything: Gates = {
    chatbotEnabled: true,
    withinSchedule: true,
    operatorAvailable: true,
    aiFeatureEnabled: true,
    providerAvailable: true,
  };

  it('is disabled when the bot is off, whatever else holds', () => {
    expect(outcomeOf({ ...everything, chatbotEnabled: false }, handoff, enough)).toBe('disabled');
    expect(outcomeOf({ ...open, chatbotEnabled: false, withinSchedule: false }, answer, little)).toBe(
      'disabled',
    );
  });

  it('is outside_schedule next, before any policy or knowledge', () => {
    expect(outcomeOf({ ...everything, withinSchedule: false }, handoff, enough)).toBe('outside_schedule');
  });

  it('hands off when the policy says so, before knowledge or AI, without an operator too', () => {
    expect(outcomeOf(everything, handoff, enough)).toBe('handoff');
    expect(outcomeOf(open, handoff, little)).toBe('handoff');
  });

  it('answers from knowledge when it is sufficient, before the AI', () => {
    expect(outcomeOf(everything, answer, enough)).toBe('knowledge_answer');
    expect(outcomeOf(everything, collect, enough)).toBe('knowledge_answer');
  });

  it('answers with the AI when the feature and a provider are both available, before an operator', () => {
    expect(outcomeOf(everything, answer, little)).toBe('ai_answer');
    expect(outcomeOf({ ...open, aiFeatureEnabled: true, providerAvailable: true }, collect, little)).toBe(
      'ai_answer',
    );
  });

  it('hands off to an available operator when the AI cannot answer', () => {
    expect(outcomeOf({ ...everything, providerAvailable: false }, answer, little)).toBe('handoff');
    expect(outcomeOf({ ...everything, aiFeatureEnabled: false }, answer, little)).toBe('handoff');
  });

  it('falls back to the message when nothing else applies', () => {
    expect(outcomeOf(open, answer, little)).toBe('fallback_message');
    expect(outcomeOf({ ...open, aiFeatureEnabled: true }, answer, little)).toBe('fallback_message');
    expect(outcomeOf({ ...open, providerAvailable: true }, collect, little)).toBe('fallback_message');
  });
});

describe('simulate', () => {
  const config = {
    ...defaultChatbotConfig('2026-11-21T10:00:00.000Z'),
    enabled: true,
    schedule: { timezone: 'Europe/Paris', days: [{ day: 'fri' as const, from: '22:00', to: '02:00' }] },
    rules: [rule('01', 'billing', ['refund'])],
    intentPolicies: [
      { intent: 'billing', handling: 'answer' as const, tag: 'money', priority: 'high' as const },
    ],
  };
  const facts = (changes: Partial<SimulationFacts> = {}): SimulationFacts => ({
    orgId: ORG,
    config,
    message: 'A refund, please',
    ranked: [],
    operatorAvailable: false,
    aiFeatureEnabled: true,
    providerAvailable: true,
    // Saturday 01:00 in Paris.
    nowMs: at('2026-11-21T00:00:00Z'),
    ...changes,
  });

  it('composes the rule, its policy, the knowledge and the gates, with the clock it is given', () => {
    expect(simulate(facts())).toEqual({
      outcome: 'ai_answer',
      intent: 'billing',
      consumesAiCredit: true,
      rule: {
        id: config.rules[0]?.id,
        name: 'Rule 01',
        intent: 'billing',
        actions: ['answer_from_knowledge'],
      },
      intentPolicy: { intent: 'billing', handling: 'answer', tag: 'money', priority: 'high' },
      knowledge: { confidence: 0, threshold: 0.35, sufficient: false, articles: [] },
      gates: {
        chatbotEnabled: true,
        withinSchedule: true,
        operatorAvailable: false,
        aiFeatureEnabled: true,
        providerAvailable: true,
      },
    });
  });

  it('uses no AI credit for any other outcome', () => {
    // Saturday 03:00 in Paris.
    const late = simulate(facts({ nowMs: at('2026-11-21T02:00:00Z') }));
    const known = simulate(facts({ ranked: [{ articleId: 'a', title: 'Refunds', slug: 'r', score: 0.8 }] }));
    const fallback = simulate(facts({ message: 'hello', providerAvailable: false }));

    expect([late.outcome, late.consumesAiCredit, late.gates.withinSchedule]).toEqual([
      'outside_schedule',
      false,
      false,
    ]);
    expect([known.outcome, known.consumesAiCredit]).toEqual(['knowledge_answer', false]);
    expect([fallback.outcome, fallback.intent, fallback.consumesAiCredit]).toEqual([
      'fallback_message',
      'general',
      false,
    ]);
    expect(fallback.intentPolicy).toEqual({
      intent: 'general',
      handling: 'answer',
      tag: 'general',
      priority: 'low',
    });
  });
});
