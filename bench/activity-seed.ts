import { deflateRawSync } from 'node:zlib';
import type { Visitor } from '../shared/schemas/visitor';

/**
 * A busy organization's items for the analytics export's part-days, written straight to the table
 * (unmeasured): what the day counters of stats-scenarios.ts hold per day (112 conversations
 * created, 96 closed, 1,280 visitor and 1,120 operator messages, 88 first responses, 40 survey
 * responses), as the writes leave them: a domain event per creation, closure (beside its
 * `conversation.updated`) and message, the conversations themselves (first response, active
 * survey), and the responses with their by-time index entry. Spread evenly over `[fromMs, toMs)`.
 */
export const PER_DAY = {
  conversations: 112,
  closed: 96,
  visitorMessages: 1_280,
  operatorMessages: 1_120,
  firstResponses: 88,
  responses: 40,
};

const DAY_MS = 86_400_000;
const CONTENT =
  'Hello, my parcel was due on Monday and the tracking page has not moved since Friday. Could you check?';

export async function activityItems(
  orgId: string,
  fromMs: number,
  toMs: number,
): Promise<Record<string, unknown>[]> {
  // Loaded here: the data layer reads its configuration (the local stack's table) at import.
  const { keys } = await import('../shared/db/keys');
  const { conversationItem, newConversation, toConversation } = await import('../shared/db/conversations');
  const { newMessage } = await import('../shared/db/messages');
  const { EVENT_RETENTION_MS } = await import('../shared/db/events');
  const { uuidv7 } = await import('../shared/ids');

  const share = (perDay: number) => Math.max(1, Math.round((perDay * (toMs - fromMs)) / DAY_MS));
  const spread = (count: number, i: number) => Math.floor(fromMs + ((i + 0.5) * (toMs - fromMs)) / count);
  const iso = (ms: number) => new Date(ms).toISOString();
  const items: Record<string, unknown>[] = [];
  const event = (type: string, ms: number, data: unknown) => {
    const id = uuidv7(ms);
    items.push({
      ...keys.event(orgId, id),
      entity: 'event',
      id,
      type,
      timestamp: iso(ms),
      organizationId: orgId,
      dataZ: deflateRawSync(JSON.stringify(data)),
      expiresAt: Math.floor((ms + EVENT_RETENTION_MS) / 1000),
    });
  };

  const visitor: Visitor = {
    id: uuidv7(fromMs),
    identifier: 'ada@example.com',
    fingerprint: null,
    geoCountry: 'FR',
    geoCity: 'Lyon',
    totalSessions: 3,
    firstSeenAt: iso(fromMs),
    lastSeenAt: iso(fromMs),
    metadata: { plan: 'pro' },
  };
  const conversations = Array.from({ length: share(PER_DAY.conversations) }, (_, i) => {
    const createdAt = iso(spread(share(PER_DAY.conversations), i));
    return newConversation({
      id: uuidv7(Date.parse(createdAt)),
      organizationId: orgId,
      visitor,
      operatorId: null,
      status: 'open',
      priority: 'normal',
      source: 'widget',
      snoozedUntil: null,
      createdAt,
      title: 'Parcel late',
      tags: ['orders'],
      customFields: {},
      language: 'en',
      metadata: { orderId: 'A-1234' },
    });
  });
  const pick = (i: number) => conversations[i % conversations.length] ?? conversations[0];

  for (const conversation of conversations)
    event('conversation.created', Date.parse(conversation.createdAt), toConversation(conversation));
  const messages = share(PER_DAY.visitorMessages) + share(PER_DAY.operatorMessages);
  for (let i = 0; i < messages; i++) {
    const conversation = pick(i);
    if (!conversation) break;
    const ms = spread(messages, i);
    const message = newMessage({
      orgId,
      conversationId: conversation.id,
      // 8 in 15 from visitors: 1,280 of the 2,400 a day.
      senderType: i % 15 < 8 ? 'visitor' : 'operator',
      senderId: visitor.id,
      content: CONTENT,
      now: iso(ms),
    });
    event('message.created', ms, message);
  }
  for (let i = 0; i < share(PER_DAY.closed); i++) {
    const conversation = pick(i * 7);
    if (!conversation) break;
    const ms = spread(share(PER_DAY.closed), i);
    const api = toConversation({ ...conversation, status: 'closed', updatedAt: iso(ms) });
    event('conversation.updated', ms, api);
    event('conversation.closed', ms, api);
  }
  const answered = share(PER_DAY.firstResponses);
  const rated = share(PER_DAY.responses);
  conversations.forEach((conversation, i) => {
    const firstResponseTimeMs = i < answered ? 45_000 + i * 1_000 : null;
    const surveyAt = Date.parse(conversation.createdAt) + 600_000;
    const survey =
      i < rated && surveyAt < toMs
        ? {
            surveyId: uuidv7(surveyAt),
            score: 1 + (i % 5),
            day: iso(surveyAt).slice(0, 10),
            operatorId: null,
          }
        : null;
    items.push(
      conversationItem({
        ...conversation,
        messageCount: 21,
        firstVisitorMessageAt: conversation.createdAt,
        firstResponseTimeMs,
        activeSurvey: survey,
      }),
    );
    if (survey)
      items.push({
        ...keys.survey(orgId, conversation.id, survey.surveyId),
        ...keys.surveyByTime(orgId, iso(surveyAt), conversation.id, survey.surveyId),
        entity: 'survey',
        id: survey.surveyId,
        orgId,
        conversationId: conversation.id,
        visitorId: visitor.id,
        operatorId: null,
        score: survey.score,
        comment: 'Quick and friendly',
        isActive: true,
        createdAt: iso(surveyAt),
        updatedAt: iso(surveyAt),
        deactivatedAt: null,
      });
  });
  return items;
}
