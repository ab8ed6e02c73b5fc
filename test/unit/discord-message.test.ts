import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  inertText,
  nonceOf,
  notificationMessage,
  VISITOR_TEXT_MAX_CHARS,
} from '../../shared/discord/message';
import { notifiedConversation as conversation } from './helpers/discord-fixtures';

const ZWSP = '\u200b';
/** What a reader sees: backslash escapes and zero-width spaces gone. */
const visible = (text: string) => text.replaceAll(ZWSP, '').replace(/\\(.)/g, '$1');

describe('inertText', () => {
  it('breaks every mention, including @everyone and @here', () => {
    const text = inertText(
      '@everyone @here <@123456789012345678> <@&123456789012345678> <#123456789012345678>',
    );

    expect(text).not.toMatch(/@(everyone|here)/);
    expect(text).not.toMatch(/<@&?\d+>|<#\d+>/);
    expect(visible(text)).toBe(
      '@everyone @here <@123456789012345678> <@&123456789012345678> <#123456789012345678>',
    );
  });

  it('escapes markdown and leaves no clickable link', () => {
    const text = inertText(
      '**bold** _it_ ~~x~~ `code` > quote # head [a](https://x.example) ||spoiler|| https://evil.example',
    );

    expect(text).not.toContain('https://');
    expect(text).not.toContain('**');
    expect(text).not.toContain('](');
    expect(visible(text)).toBe(
      '**bold** _it_ ~~x~~ `code` > quote # head [a](https://x.example) ||spoiler|| https://evil.example',
    );
  });

  it('keeps at most 200 characters of what a visitor wrote, on one line', () => {
    const long = `line one\nline two ${'😀'.repeat(300)}`;

    const text = visible(inertText(long));

    expect(Array.from(text)).toHaveLength(VISITOR_TEXT_MAX_CHARS);
    expect(text.startsWith('line one line two 😀')).toBe(true);
    expect(text.endsWith('…')).toBe(true);
    expect(text).not.toContain('\n');
  });

  it('never lets a mention or a link through, whatever the input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (raw) => {
        const text = inertText(raw);
        expect(text).not.toMatch(/@(everyone|here)/);
        expect(text).not.toContain('://');
        expect(Array.from(visible(text)).length).toBeLessThanOrEqual(VISITOR_TEXT_MAX_CHARS);
      }),
      { numRuns: 500 },
    );
  });
});

describe('notificationMessage', () => {
  it('is an embed of the conversation, with no mention allowed and a nonce', () => {
    const message = notificationMessage('new_conversation', conversation, {
      nonce: nonceOf('e1', 'c1'),
      timestamp: '2026-11-21T10:00:00.000Z',
    });

    expect(message.allowed_mentions).toEqual({ parse: [] });
    expect(message.enforce_nonce).toBe(true);
    expect(message.nonce).toHaveLength(25);
    expect(message.embeds[0]).toMatchObject({
      title: 'New conversation: Where is my order?',
      description: 'Hello, my order is late',
      footer: { text: `Conversation ${conversation.id}` },
      timestamp: '2026-11-21T10:00:00.000Z',
    });
    expect(message.embeds[0]?.fields.map((field) => [field.name, field.value])).toEqual([
      ['Status', 'open'],
      ['Priority', 'normal'],
      ['Source', 'widget'],
    ]);
    expect(JSON.stringify(message)).not.toMatch(/"url"|https?:/);
  });

  it('names the operator of an assignment, and says when there is no title or message', () => {
    const message = notificationMessage(
      'conversation_assigned',
      { ...conversation, title: '  ', lastMessage: null, operatorId: '019a7c1e-5c10-7d21-8e32-3f43a54b6506' },
      { nonce: 'n', timestamp: '2026-11-21T10:00:00.000Z' },
    );

    expect(message.embeds[0]?.title).toBe('Conversation assigned: Untitled conversation');
    expect(message.embeds[0]?.description).toBe('No message yet');
    expect(visible(message.embeds[0]?.fields.at(-1)?.value ?? '')).toBe(
      '019a7c1e-5c10-7d21-8e32-3f43a54b6506',
    );
  });

  it('gives the same job the same nonce, and another channel or event another one', () => {
    expect(nonceOf('event-1', 'channel-1')).toBe(nonceOf('event-1', 'channel-1'));
    expect(nonceOf('event-1', 'channel-2')).not.toBe(nonceOf('event-1', 'channel-1'));
    expect(nonceOf('event-2', 'channel-1')).not.toBe(nonceOf('event-1', 'channel-1'));
  });
});
