import { createHash } from 'node:crypto';
import type { DiscordEventType } from '../schemas/discord';

/** The most of a visitor's text a notification carries. */
export const VISITOR_TEXT_MAX_CHARS = 200;

const ZERO_WIDTH_SPACE = '\u200b';

/** At most `max` characters as people count them (never half a surrogate pair), `…` included. */
function truncate(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/**
 * Text someone else wrote (a visitor's title or message), made inert for Discord: at most 200
 * characters, on one line, every markdown character escaped, no mention that could resolve (`@` is
 * followed by a zero-width space, so `@everyone`, `@here`, `<@id>` and `<@&id>` stay text) and no
 * link Discord would make clickable (`://` is broken the same way). `allowed_mentions` in the
 * message stops pings too; this keeps the text itself from looking like one.
 */
export function inertText(raw: string, max = VISITOR_TEXT_MAX_CHARS): string {
  const oneLine = raw.replace(/\s+/g, ' ').trim();
  return truncate(oneLine, max)
    .replace(/[\\*_~`|>#\-[\]()<]/g, (char) => `\\${char}`)
    .replaceAll('@', `@${ZERO_WIDTH_SPACE}`)
    .replace(/:\/\//g, `:${ZERO_WIDTH_SPACE}//`);
}

/** The conversation fields a notification is made of: nothing else of the event reaches Discord. */
export interface NotifiedConversation {
  id: string;
  title: string;
  status: string;
  priority: string;
  source: string;
  operatorId: string | null;
  lastMessage: { content: string } | null;
}

const headline: Record<DiscordEventType, string> = {
  new_conversation: 'New conversation',
  conversation_assigned: 'Conversation assigned',
  conversation_closed: 'Conversation closed',
};

const colour: Record<DiscordEventType, number> = {
  new_conversation: 0x2f80ed,
  conversation_assigned: 0xf2994a,
  conversation_closed: 0x6fcf97,
};

/** Our own words (enum values): safe, but passed through the same escaping for one rule everywhere. */
const field = (name: string, value: string) => ({ name, value: inertText(value, 50) || '–', inline: true });

/**
 * Discord's `nonce` (at most 25 characters) with `enforce_nonce`: a repeat of the same job within
 * Discord's window (a redelivery, a retry after a lost answer) returns the message already created
 * instead of posting it twice.
 */
export function nonceOf(eventId: string, channelId: string): string {
  return createHash('sha256').update(`${eventId}:${channelId}`).digest('base64url').slice(0, 25);
}

/**
 * The message body of one notification: an embed of the conversation's title, status and priority
 * and a link-free summary (the latest message's preview), no link, no mention allowed.
 */
export function notificationMessage(
  event: DiscordEventType,
  conversation: NotifiedConversation,
  options: { nonce: string; timestamp: string },
) {
  const title = conversation.title.trim() ? inertText(conversation.title) : 'Untitled conversation';
  const summary = conversation.lastMessage?.content
    ? inertText(conversation.lastMessage.content)
    : 'No message yet';
  return {
    embeds: [
      {
        title: `${headline[event]}: ${title}`,
        description: summary,
        color: colour[event],
        fields: [
          field('Status', conversation.status),
          field('Priority', conversation.priority),
          field('Source', conversation.source),
          ...(event === 'conversation_assigned'
            ? [field('Operator', conversation.operatorId ?? 'unassigned')]
            : []),
        ],
        footer: { text: `Conversation ${conversation.id}` },
        timestamp: options.timestamp,
      },
    ],
    allowed_mentions: { parse: [] as string[] },
    nonce: options.nonce,
    enforce_nonce: true,
  };
}
export type NotificationMessage = ReturnType<typeof notificationMessage>;
