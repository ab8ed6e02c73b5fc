import { describe, expect, it } from 'vitest';
import {
  changedChatbotConfig,
  chatbotConfigOf,
  defaultChatbotConfig,
  replacementOf,
} from '../../shared/chatbot/config';
import { ValidationError } from '../../shared/errors';

const now = '2026-11-21T10:00:00.000Z';

describe('chatbot configuration', () => {
  it('reads an organization stored before the present shape as the defaults it still means', () => {
    const config = chatbotConfigOf({ enabled: true, providerId: null, confidenceThreshold: 0.6 }, now);

    expect(config).toEqual({ ...defaultChatbotConfig(now), enabled: true });
    expect(chatbotConfigOf(undefined, now)).toEqual(defaultChatbotConfig(now));
  });

  it('replaces every field on PUT, defaults included, and gives new rules ids', () => {
    const current = {
      ...defaultChatbotConfig(now),
      enabled: true,
      knowledgeThreshold: 0.8,
      intentPolicies: [
        { intent: 'billing', handling: 'handoff' as const, tag: 'billing', priority: 'high' as const },
      ],
    };

    const next = changedChatbotConfig(
      current,
      replacementOf({ rules: [{ name: 'R', intent: 'general', keywords: ['hi'], actions: [] }] }),
      '2026-11-21T11:00:00.000Z',
    );

    expect(next).toMatchObject({
      enabled: false,
      knowledgeThreshold: 0.35,
      intentPolicies: [],
      schedule: null,
      updatedAt: '2026-11-21T11:00:00.000Z',
    });
    expect(next.rules[0]?.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuses a configuration larger than 64 KiB as JSON', () => {
    const rules = Array.from({ length: 100 }, () => ({
      name: 'x'.repeat(100),
      intent: 'general',
      keywords: Array.from({ length: 20 }, () => 'k'.repeat(50)),
      actions: [],
    }));

    expect(() => changedChatbotConfig(defaultChatbotConfig(now), { rules }, now)).toThrow(ValidationError);
  });
});
